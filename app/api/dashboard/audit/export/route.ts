import { fileRoute } from "@/lib/delivery/audit-route";
import { exportAuditEvents, ZExportAuditEventsRequest } from "@/lib/desks/audit/export-audit-events";

// GET /api/dashboard/audit/export?format=csv|jsonl&run=...&actor=...&type=...&from=...&to=...
// Not userRoute: the answer is a file streamed as it is read (a ReadableStream), not one JSON value.
export const GET = fileRoute("read", ZExportAuditEventsRequest, (query, user) => exportAuditEvents({ actor: user, filters: query }));
