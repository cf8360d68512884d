/**
 * The audit log's filtered view as a file, CSV or JSON lines, streamed: the stream reads one page of
 * the log (readAuditPage, the same reader as the page) each time its consumer wants more, so memory
 * holds one page whatever the log's size, and a slow download slows the reads instead of queueing rows.
 * Events come newest first, exactly those the page shows for the same filters.
 */
import { z } from "zod";
import type { PersonRequest } from "@/lib/server/auth/current-user";
import { assertCan } from "@/lib/server/auth/roles";
import { withDb } from "@/lib/desks/dashboard/context";
import { AUDIT_EVENT_COLUMNS } from "./audit-event-view";
import { csvRecord } from "./audit-csv";
import { auditFilterOf, checkAuditFilters, readAuditPage, ZAuditFilterFields } from "./find-audit-events";
import type { TAuditEventView } from "./views";

/** The formats of an export. */
export const AuditExportFormat = {
  /** RFC 4180 CSV with a header row; `data` is its JSON text, an empty runId/stepId is none. */
  CSV: "csv",
  /** One JSON object per line (the event as the JSON routes give it). */
  JSONL: "jsonl",
} as const;
export type AuditExportFormat = (typeof AuditExportFormat)[keyof typeof AuditExportFormat];

/** The filters of an export: the page's, without paging. */
export const ZExportAuditEventsRequest = ZAuditFilterFields.extend({
  /** File format. */
  format: z.enum(AuditExportFormat).default(AuditExportFormat.CSV),
}).superRefine(checkAuditFilters);
/** What callers pass to `exportAuditEvents`. */
export type TExportAuditEventsRequest = z.input<typeof ZExportAuditEventsRequest>;

/** Events read per page of the stream. */
export const EXPORT_PAGE_SIZE = 1000;

/** An export ready to send. */
export interface AuditExport {
  /** The file's content, produced as it is read. */
  stream: ReadableStream<Uint8Array>;
  /** MIME type. */
  contentType: string;
  /** A file name that says what and when (`sagaboard-audit-run_x-20261201T1030Z.csv`). */
  filename: string;
}

function csvCells(e: TAuditEventView): string[] {
  return AUDIT_EVENT_COLUMNS.map((column) => {
    const value = e[column];
    if (value === null) return "";
    return column === "data" ? JSON.stringify(value) : String(value);
  });
}

function filenameOf(request: z.output<typeof ZExportAuditEventsRequest>, now: Date): string {
  const parts = [request.run ?? request.scope, request.actor, request.type].filter((p): p is string => Boolean(p)).map((p) => p.replace(/[^A-Za-z0-9._@-]+/g, "_").slice(0, 60));
  const stamp = now.toISOString().slice(0, 16).replace(/[-:]/g, "");
  return `sagaboard-audit-${[...parts, `${stamp}Z`].join("-")}.${request.format}`;
}

/**
 * The events matching the filters as a stream of CSV or JSON lines. Checks the caller may read the
 * log before anything is read; throws a ZodError when a filter is malformed.
 */
export async function exportAuditEvents({ actor, filters = {} }: PersonRequest<{ filters?: TExportAuditEventsRequest }>): Promise<AuditExport> {
  assertCan(actor, "read");
  // The filters sit apart: one of them is named `actor` too (whose events to show).
  const query = ZExportAuditEventsRequest.parse(filters);
  const filter = auditFilterOf(query);
  const encoder = new TextEncoder();
  const csv = query.format === AuditExportFormat.CSV;
  let cursor: number | null = null;
  let started = false;
  let done = false;

  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          let text = "";
          if (!started) {
            started = true;
            if (csv) text += csvRecord(AUDIT_EVENT_COLUMNS);
          }
          // A page can be empty when a selective filter's search window ran out: read on until
          // something is written or the log is exhausted.
          while (!done && text === "") {
            const page = await withDb((prisma) => readAuditPage(prisma, filter, cursor, EXPORT_PAGE_SIZE));
            for (const event of page.events) text += csv ? csvRecord(csvCells(event)) : `${JSON.stringify(event)}\n`;
            cursor = page.nextCursor === null ? null : Number(page.nextCursor);
            done = cursor === null;
          }
          if (text) controller.enqueue(encoder.encode(text));
          if (done) controller.close();
        } catch (e) {
          controller.error(e);
        }
      },
    },
    // One page in the queue at a time: the next is read when the consumer has taken this one.
    { highWaterMark: 1 },
  );
  return {
    stream,
    contentType: csv ? "text/csv; charset=utf-8" : "application/x-ndjson; charset=utf-8",
    filename: filenameOf(query, new Date()),
  };
}
