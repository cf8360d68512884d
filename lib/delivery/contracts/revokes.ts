/**
 * The revoke trigger's endpoints: what a run offers, pulling back a step or a whole run (roles the
 * tool table names), and the records of who pulled what.
 */
import * as z from "zod";
import { DashboardPath } from "@/lib/delivery/dashboard-paths";
import { defineEndpoint } from "@/packages/client/src/protocol/endpoint";
import { ZRevokePage } from "@/lib/desks/revokes/find-revokes";
import { ZPullResult, ZRevokeOptions, RevokeOutcome } from "@/lib/desks/revokes/views";

const tags = ["revokes"];
const Id = z.string().trim().min(1).max(80);
const Reason = z.object({ reason: z.string().max(2000) });

export const dashboardGetRevokeOptions = defineEndpoint({
  method: "GET",
  path: DashboardPath.getRevokeOptions,
  operationId: "dashboardGetRevokeOptions",
  summary: "What the revoke trigger offers on a run: each confirmed step, its window left and what pulling it does",
  tags,
  auth: "user",
  params: z.object({ runId: Id }),
  response: ZRevokeOptions,
});

export const dashboardPullRunRevoke = defineEndpoint({
  method: "POST",
  path: DashboardPath.pullRunRevoke,
  operationId: "dashboardPullRunRevoke",
  summary: "Pull back a whole run, last step first, each step by its own window",
  description: "A repeat (or a second person at once) is answered 200 with the first revoke and `created: false`.",
  tags,
  auth: "user",
  params: z.object({ runId: Id }),
  body: Reason,
  response: ZPullResult,
});

export const dashboardPullStepRevoke = defineEndpoint({
  method: "POST",
  path: DashboardPath.pullStepRevoke,
  operationId: "dashboardPullStepRevoke",
  summary: "Pull back one confirmed step (past its window: open an escalation instead)",
  description: "A repeat (or a second person at once) is answered 200 with the first revoke and `created: false`.",
  tags,
  auth: "user",
  params: z.object({ stepId: Id }),
  body: Reason,
  response: ZPullResult,
});

export const dashboardFindRevokes = defineEndpoint({
  method: "GET",
  path: DashboardPath.findRevokes,
  operationId: "dashboardFindRevokes",
  summary: "Revoke records: who pulled what, when, why, and how it ended",
  tags,
  auth: "user",
  query: z.object({
    person: z.string().trim().min(1).max(320).optional(),
    tool: z.string().trim().min(1).max(80).optional(),
    outcome: z.enum(RevokeOutcome).optional(),
    from: z.iso.datetime().optional(),
    to: z.iso.datetime().optional(),
    cursor: Id.optional(),
    take: z.coerce.number().int().min(1).max(200).default(50),
  }),
  response: ZRevokePage,
});
