/**
 * Contracts of the dashboard's JSON routes (app/api/dashboard/**): what the browser polls and the
 * mutations it sends. Session-authenticated (auth "user"); each lib use case authorises again.
 */
import * as z from "zod";
import { DashboardPath } from "@/lib/delivery/dashboard-paths";
import { defineEndpoint } from "@/packages/client/src/protocol/endpoint";
import { ZEscalationKind, ZPivotRejectionCode, ZRunStatus } from "@/packages/client/src/protocol/schemas/saga";
import { ZDecideHeldCallsRequest } from "@/lib/desks/escalations/decide-held-calls";
import { ZEditPlanItemRequest } from "@/lib/desks/pivots/edit-plan-item";
import { ZEscalationResolution } from "@/lib/desks/escalations/resolve-escalation";
import { ZEditPlanItemResult, ZPivotDecisionResult, ZPivotScreen } from "@/lib/desks/pivots/views";
import {
  ZBulkDecisionResult,
  ZClaimResult,
  ZEscalationDetail,
  ZEscalationQueue,
  ZRealSystemCheckState,
  ZResolveResult,
} from "@/lib/desks/escalations/views";
import { ZRunsPage } from "@/lib/desks/runs/find-runs";
import { ZRunTimelineView } from "@/lib/desks/runs/get-run-timeline";

const tags = ["dashboard"];
const Id = z.string().trim().min(1).max(80);
/** A query flag: `1`/`true` or `0`/`false`. */
const QueryFlag = z.enum(["1", "0", "true", "false"]).transform((v) => v === "1" || v === "true");
const Take = z.coerce.number().int().min(1).max(200).default(50);
const PlanHash = z.string().trim().min(1).max(128);

export const dashboardFindRuns = defineEndpoint({
  method: "GET",
  path: DashboardPath.findRuns,
  operationId: "dashboardFindRuns",
  summary: "Runs (filters, search) and the counts of what waits for people",
  tags,
  auth: "user",
  query: z.object({
    status: ZRunStatus.optional(),
    agent: z.string().trim().min(1).max(200).optional(),
    needsAttention: QueryFlag.optional(),
    q: z.string().trim().min(1).max(200).optional(),
    cursor: Id.optional(),
    take: Take,
  }),
  response: ZRunsPage,
});

export const dashboardGetRunTimeline = defineEndpoint({
  method: "GET",
  path: DashboardPath.getRunTimeline,
  operationId: "dashboardGetRunTimeline",
  summary: "One run's timeline: steps, pivots, escalations, corrections, audit events",
  tags,
  auth: "user",
  params: z.object({ runId: Id }),
  response: ZRunTimelineView,
});

const PivotParams = z.object({ pivotId: Id });

export const dashboardGetPivotScreen = defineEndpoint({
  method: "GET",
  path: DashboardPath.getPivotScreen,
  operationId: "dashboardGetPivotScreen",
  summary: "Everything a reviewer needs to decide one pivot",
  tags,
  auth: "user",
  params: PivotParams,
  response: ZPivotScreen,
});

export const dashboardApprovePivot = defineEndpoint({
  method: "POST",
  path: DashboardPath.approvePivot,
  operationId: "dashboardApprovePivot",
  summary: "Approve a pivot, bound to the plan hash the page loaded",
  description: "A changed plan (or tool policy) is answered 200 with `{ ok: false, reason: \"plan_changed\", current }`.",
  tags,
  auth: "user",
  params: PivotParams,
  body: z.object({ planHash: PlanHash }),
  response: ZPivotDecisionResult,
});

export const dashboardRejectPivot = defineEndpoint({
  method: "POST",
  path: DashboardPath.rejectPivot,
  operationId: "dashboardRejectPivot",
  summary: "Reject a pivot with a reason for the agent, bound to the plan hash the page loaded",
  tags,
  auth: "user",
  params: PivotParams,
  body: z.object({ planHash: PlanHash, reason: z.string().max(2000), reasonCode: ZPivotRejectionCode.optional() }),
  response: ZPivotDecisionResult,
});

export const dashboardEditPlanItem = defineEndpoint({
  method: "POST",
  path: DashboardPath.editPlanItem,
  operationId: "dashboardEditPlanItem",
  summary: "Edit one plan item's arguments before deciding, bound to the plan hash the page loaded",
  description: "The pivot's plan (and hash) become the edited ones; the diff is recorded. A changed plan is answered 200 with `{ ok: false, reason }`.",
  tags,
  auth: "user",
  params: PivotParams,
  body: ZEditPlanItemRequest.omit({ pivotId: true }),
  response: ZEditPlanItemResult,
});

export const dashboardFindEscalations = defineEndpoint({
  method: "GET",
  path: DashboardPath.findEscalations,
  operationId: "dashboardFindEscalations",
  summary: "The escalation queue",
  tags,
  auth: "user",
  query: z.object({
    view: z.enum(["open", "resolved", "all"]).default("open"),
    kind: ZEscalationKind.optional(),
    mine: QueryFlag.optional(),
    cursor: Id.optional(),
    take: Take,
  }),
  response: ZEscalationQueue,
});

const EscalationParams = z.object({ escalationId: Id });

export const dashboardGetEscalation = defineEndpoint({
  method: "GET",
  path: DashboardPath.getEscalation,
  operationId: "dashboardGetEscalation",
  summary: "One escalation with what its resolution form needs",
  tags,
  auth: "user",
  params: EscalationParams,
  response: ZEscalationDetail,
});

export const dashboardClaimEscalation = defineEndpoint({
  method: "POST",
  path: DashboardPath.claimEscalation,
  operationId: "dashboardClaimEscalation",
  summary: "Claim an escalation (once: a second claimer is told who holds it)",
  tags,
  auth: "user",
  params: EscalationParams,
  response: ZClaimResult,
});

export const dashboardReleaseEscalation = defineEndpoint({
  method: "POST",
  path: DashboardPath.releaseEscalation,
  operationId: "dashboardReleaseEscalation",
  summary: "Give a claimed escalation back to the queue",
  tags,
  auth: "user",
  params: EscalationParams,
  response: ZClaimResult,
});

export const dashboardCheckRealSystem = defineEndpoint({
  method: "POST",
  path: DashboardPath.checkRealSystem,
  operationId: "dashboardCheckRealSystem",
  summary: "Look the step's key up in the real system (changes nothing): here when this server holds the tool's connector, else on a worker that does",
  tags,
  auth: "user",
  params: EscalationParams,
  response: ZRealSystemCheckState,
});

export const dashboardGetRealSystemCheck = defineEndpoint({
  method: "GET",
  path: DashboardPath.getRealSystemCheck,
  operationId: "dashboardGetRealSystemCheck",
  summary: "Where the latest check of the real system stands (a worker's answer, or still waiting)",
  tags,
  auth: "user",
  params: EscalationParams,
  response: ZRealSystemCheckState,
});

export const dashboardDecideHeldCalls = defineEndpoint({
  method: "POST",
  path: DashboardPath.decideHeldCalls,
  operationId: "dashboardDecideHeldCalls",
  summary: "Approve or reject several held calls of one tool with one reason, each recorded on its own",
  description: "An item already decided or held by someone else is skipped and reported; nothing is decided twice.",
  tags,
  auth: "user",
  body: ZDecideHeldCallsRequest,
  response: ZBulkDecisionResult,
});

export const dashboardResolveEscalation = defineEndpoint({
  method: "POST",
  path: DashboardPath.resolveEscalation,
  operationId: "dashboardResolveEscalation",
  summary: "Resolve a claimed escalation with the form of its kind",
  tags,
  auth: "user",
  params: EscalationParams,
  body: ZEscalationResolution,
  response: ZResolveResult,
});
