/**
 * The connection to the real MCP server. The SDK's client drops an answer that arrives after its
 * request timed out or was cancelled; an effect's late answer is exactly what settles an UNKNOWN step,
 * so the transport under the client is watched: every `tools/call` carries the step's key in
 * `_meta`, and any answer to it (on time or late) is kept for the gateway by that key.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage, MessageExtraInfo } from "@modelcontextprotocol/sdk/types.js";

/** Where a step's key is stamped on the forwarded call, for servers that dedupe by it. */
export const KEY_META = "dev.sagaboard/idempotencyKey";

/** A JSON-RPC answer to a forwarded call. */
export type RawAnswer = { result?: unknown; error?: { code: number; message: string } };

/** Delegates to the real transport and keeps every answer to a keyed `tools/call`. */
export class WatchedTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  private readonly keyById = new Map<string | number, string>();
  private readonly answers = new Map<string, RawAnswer>();
  private readonly waiters = new Map<string, ((a: RawAnswer) => void)[]>();

  constructor(private readonly inner: Transport) {}

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  async start(): Promise<void> {
    this.inner.onmessage = (message, extra) => {
      this.observe(message);
      this.onmessage?.(message, extra);
    };
    this.inner.onclose = () => this.onclose?.();
    this.inner.onerror = (e) => this.onerror?.(e);
    await this.inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if ("method" in message && message.method === "tools/call" && "id" in message) {
      const key = (message.params as { _meta?: Record<string, unknown> } | undefined)?._meta?.[KEY_META];
      if (typeof key === "string") this.keyById.set(message.id, key);
    }
    return this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private observe(message: JSONRPCMessage): void {
    if (!("id" in message) || "method" in message || message.id === undefined) return;
    const key = this.keyById.get(message.id);
    if (key === undefined) return;
    this.keyById.delete(message.id);
    const answer: RawAnswer = "result" in message ? { result: message.result } : { error: (message as { error: RawAnswer["error"] }).error };
    this.answers.set(key, answer);
    for (const wake of this.waiters.get(key) ?? []) wake(answer);
    this.waiters.delete(key);
  }

  /** The answer the server sent for the call stamped with `key`, waiting up to `ms` for it; null if none came. */
  answerFor(key: string, ms: number): Promise<RawAnswer | null> {
    const kept = this.answers.get(key);
    if (kept) return Promise.resolve(kept);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters.set(key, (this.waiters.get(key) ?? []).filter((w) => w !== wake));
        resolve(null);
      }, ms);
      const wake = (a: RawAnswer) => {
        clearTimeout(timer);
        resolve(a);
      };
      this.waiters.set(key, [...(this.waiters.get(key) ?? []), wake]);
    });
  }

  /** Forgets a settled key's answer. */
  forget(key: string): void {
    this.answers.delete(key);
  }
}

/**
 * How to reach the real server: a command line (stdio; `env` is what the operator passes it beyond the
 * minimal environment) or a URL (streamable HTTP).
 */
export type UpstreamTarget =
  | { command: string; args: string[]; env?: Record<string, string>; cwd?: string }
  | { url: string }
  /** A transport the caller made (the in-process gateway): its name says which server it reaches. */
  | { transport: Transport; name: string };

/** A connected client to the real server and its watched transport. */
export interface Upstream {
  client: Client;
  transport: WatchedTransport;
}

/**
 * Connects to the real server. The gateway announces no roots: a client's roots are never forwarded
 * (they would replace `server-filesystem`'s sandbox with the client's directories).
 */
export async function connectUpstream(target: UpstreamTarget): Promise<Upstream> {
  const inner: Transport =
    "transport" in target
      ? target.transport
      : "url" in target
      ? new StreamableHTTPClientTransport(new URL(target.url))
      : new StdioClientTransport({
          command: target.command,
          args: target.args,
          // An explicit environment: the SDK's minimal one (HOME, LOGNAME, PATH, SHELL, TERM, USER) and
          // what the operator names with --pass-env. Never the gateway's own: its Sagaboard token would
          // reach the server and whatever the server runs (server-everything's get-env prints it).
          env: { ...getDefaultEnvironment(), ...target.env },
          cwd: target.cwd,
          stderr: "inherit",
        });
  const transport = new WatchedTransport(inner);
  const client = new Client({ name: "sagaboard-mcp-gateway", version: "0.1.0" }, { capabilities: {} });
  await client.connect(transport);
  return { client, transport };
}
