/**
 * One audit event as the audit log's screens, JSON routes and exports carry it: every column of the
 * AuditEvent row, the time as ISO 8601 UTC (the database clock), the data as the JSON it was hashed as.
 * The one mapper from the row, so the page, the JSON lines export and the CSV export cannot disagree.
 */
import type { AuditEvent } from "@/generated/prisma";
import type { Json } from "@/packages/client/src/saga/tools";
import type { TAuditEventView } from "./views";

/** The columns of an event, in export order (the CSV header). */
export const AUDIT_EVENT_COLUMNS = ["id", "at", "scope", "seq", "runId", "stepId", "type", "actor", "data", "prevHash", "hash"] as const satisfies readonly (keyof TAuditEventView)[];

/** The view of a row. */
export function toAuditEventView(row: AuditEvent): TAuditEventView {
  return {
    id: row.id,
    scope: row.scope,
    seq: row.seq,
    runId: row.runId,
    stepId: row.stepId,
    type: row.type,
    actor: row.actor,
    data: row.data as Json,
    at: row.at.toISOString(),
    prevHash: row.prevHash,
    hash: row.hash,
  };
}
