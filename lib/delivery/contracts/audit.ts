/**
 * Contracts of the audit log's JSON routes (app/api/dashboard/audit/**): the filtered log, chain
 * verification, chain heads and the check of a saved heads file. Session-authenticated; every lib use
 * case checks the caller may read the log. The exports (CSV, JSON lines) are files, not JSON, and
 * are served by app/api/dashboard/audit/export/route.ts (see lib/delivery/audit-route.ts).
 */
import { DashboardPath } from "@/lib/delivery/dashboard-paths";
import { defineEndpoint } from "@/packages/client/src/protocol/endpoint";
import { MAX_HEADS_FILE_BYTES } from "@/lib/desks/audit/check-chain-heads";
import { ZAuditVerification, ZChainHeadsCheck, ZAuditEventsPage, ZChainHeadsFile } from "@/lib/desks/audit/views";
import { ZFindAuditEventsRequest } from "@/lib/desks/audit/find-audit-events";
import { ZVerifyAuditChainsRequest } from "@/lib/desks/audit/verify-audit-chains";

const tags = ["audit"];

export const dashboardFindAuditEvents = defineEndpoint({
  method: "GET",
  path: DashboardPath.findAuditEvents,
  operationId: "dashboardFindAuditEvents",
  summary: "The audit log, newest first, filtered by run, chain, actor, event type and time",
  description:
    "A run (or `scope`) is read through the chain index. Other filters page through the log by id and search at most 50,000 events per request: " +
    "when that window runs out before the page is full, `searchedBackTo` says how far back it searched and `nextCursor` goes on from there.",
  tags,
  auth: "user",
  query: ZFindAuditEventsRequest,
  response: ZAuditEventsPage,
});

export const dashboardVerifyAuditChains = defineEndpoint({
  method: "GET",
  path: DashboardPath.verifyAuditChains,
  operationId: "dashboardVerifyAuditChains",
  summary: "Verify every audit hash chain (or one, by `scope`) link by link",
  description: "Reads the whole log: seconds at a million events. The first broken link of each broken chain is named, with what is wrong.",
  tags,
  auth: "user",
  query: ZVerifyAuditChainsRequest,
  response: ZAuditVerification,
});

export const dashboardExportChainHeads = defineEndpoint({
  method: "GET",
  path: DashboardPath.exportChainHeads,
  operationId: "dashboardExportChainHeads",
  summary: "The head (last seq and hash) of every audit chain, with a digest: a file to keep elsewhere",
  tags,
  auth: "user",
  response: ZChainHeadsFile,
});

export const dashboardCheckChainHeads = defineEndpoint({
  method: "POST",
  path: DashboardPath.checkChainHeads,
  operationId: "dashboardCheckChainHeads",
  summary: "Check a saved heads file: which chains no longer match (rewritten, cut short, deleted)",
  description: `The body is the file as downloaded, up to ${MAX_HEADS_FILE_BYTES / 1024 / 1024} MiB (a heads file grows with the number of chains).`,
  tags,
  auth: "user",
  body: ZChainHeadsFile,
  response: ZChainHeadsCheck,
});
