/**
 * An in-process OTLP/HTTP (JSON) receiver for the tracing tests: it keeps every span the process
 * exports, with its attributes flattened, and the content types it was sent with.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** A span as OTLP/JSON carries it, with its attributes flattened. */
export interface ReceivedSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  /** When it started and ended, epoch ms. */
  startMs: number;
  endMs: number;
  attributes: Record<string, string | number | boolean>;
}

type OtlpValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean };
type OtlpSpan = Omit<ReceivedSpan, "attributes" | "startMs" | "endMs"> & { startTimeUnixNano: string | number; endTimeUnixNano: string | number; attributes: { key: string; value: OtlpValue }[] };
type OtlpBody = { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] };

/** OTLP/JSON's nanoseconds (a decimal string, or a number) as epoch ms. */
const msOf = (nanos: string | number): number => Number(BigInt(nanos) / 1000n) / 1000;

function valueOf(v: OtlpValue): string | number | boolean {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.doubleValue !== undefined) return v.doubleValue;
  return Number(v.intValue);
}

/** A running receiver: where to export (`url`), what arrived, and how to stop it. */
export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  contentTypes: string[];
  close(): Promise<void>;
}

/** Starts a receiver on a free port of 127.0.0.1. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      contentTypes.push(String(req.headers["content-type"]));
      const body = JSON.parse(Buffer.concat(chunks).toString()) as OtlpBody;
      for (const rs of body.resourceSpans) {
        for (const ss of rs.scopeSpans) {
          for (const s of ss.spans) {
            const attributes = Object.fromEntries(s.attributes.map((a) => [a.key, valueOf(a.value)]));
            spans.push({ name: s.name, traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId, startMs: msOf(s.startTimeUnixNano), endMs: msOf(s.endTimeUnixNano), attributes });
          }
        }
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`,
    spans,
    contentTypes,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
