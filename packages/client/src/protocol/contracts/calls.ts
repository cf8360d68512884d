/**
 * The call commands: how an agent in any language calls a tool through the saga log. The agent says
 * what it wants to do; the server, which owns identity, answers what it may do. The agent keeps one
 * number, the cursor (0 after every start or restart, then whatever the last answer returned).
 */
import * as z from "zod";
import { defineEndpoint } from "../endpoint";
import { ZBeginCallBody, ZCallAnswerWire, ZCompensationReportBody, ZCompleteRunBody, ZPreviousRecorded, ZOutcomeBody, ZReconcileBody, ZStepCompensateActionWire, ZUnwindActionWire } from "../schemas/calls";
import { ZRunWire, ZStepWire } from "../schemas/saga";
import { ZDraftedBy } from "../tasks/task";

const RunParams = z.object({ runId: z.string().min(1).max(80) });
const StepParams = z.object({ stepId: z.string().min(1).max(80) });

export const beginCall = defineEndpoint({
  method: "POST",
  path: "/api/v1/runs/:runId/calls",
  operationId: "beginCall",
  summary: "Begin a tool call: the server assigns the step, derives its key, runs the gate and answers call, replay, failed, reconcile or held",
  description:
    "The server hashes the arguments itself, reads class, compensator, audience and policy version from the tool table, and commits the INTENDED row before answering `call`. " +
    "Refusals are 4xx with the error shape: RUN_CLOSED, STEP_UNRESOLVED (another tool's step is unsettled), DETERMINISM (a different tool at a recorded step), TOOL_DISABLED, FORBIDDEN (outside the token's scope), VALIDATION_FAILED. " +
    "With `planItem` instead of `cursor` the call commits that item of an approved plan, whoever sends it: PIVOT_NOT_APPROVED (pending, rejected or superseded), PLAN_ALREADY_COMMITTED (the run is COMPLETED), " +
    "PLAN_ITEM_MISMATCH (not the item's tool and approved arguments), PLAN_ORDER (an earlier item is not done). Keep `nextCursor` of each answer for the next free-form call. " +
    "Send the previous call's outcome as `previous` to save its own request: it is recorded first, as its own commit, and a refusal of it (STEP_NOT_IN_FLIGHT, OUTCOME_CONFLICT, naming `previous`) stops the request before this call is begun.",
  tags: ["calls"],
  auth: "agent",
  params: RunParams,
  body: ZBeginCallBody,
  response: ZCallAnswerWire,
  example: { tool: "create_ticket", args: { subject: "Refund for order 1042", body: "Customer asked for a refund." }, cursor: 0 },
});

export const reportOutcome = defineEndpoint({
  method: "POST",
  path: "/api/v1/steps/:stepId/outcome",
  operationId: "reportOutcome",
  summary: "Report what the provider answered for a step in flight: confirmed, failed or unknown",
  description:
    "409 STEP_NOT_IN_FLIGHT when the step is not INTENDED any more (someone settled it first): begin the call again to see what the log says. A repeat of the same report gets the row back; " +
    "a report that contradicts the recorded outcome (`confirmed` with another externalRef, `confirmed` for a step recorded as refused) is 409 OUTCOME_CONFLICT and changes nothing.",
  tags: ["calls"],
  auth: "agent",
  params: StepParams,
  body: ZOutcomeBody,
  response: z.object({
    step: ZStepWire,
    nextCursor: z.number().int().describe("The cursor of the run's next call: past the step once it is settled, at it after an `unknown` (call the same tool again to reconcile)."),
  }),
  example: { outcome: "confirmed", externalRef: "TCK-1042", result: { id: "TCK-1042" }, attempts: 1 },
});

export const reportReconcile = defineEndpoint({
  method: "POST",
  path: "/api/v1/steps/:stepId/reconcile",
  operationId: "reportReconcile",
  summary: "Report what looking an unsettled step's key up found: found, absent (after the lag re-check) or the lookup failing",
  tags: ["calls"],
  auth: "agent",
  params: StepParams,
  body: ZReconcileBody,
  response: z.object({ step: ZStepWire }),
  example: { found: false, lookups: 2 },
});

export const completeRun = defineEndpoint({
  method: "POST",
  path: "/api/v1/runs/:runId/complete",
  operationId: "completeRun",
  summary: "Finish the run; refused (409 RUN_NOT_SETTLED) while a step is unsettled, and while a pivot waits",
  description: "With `previous`, the last call's outcome is recorded first (its own commit), so the last step and the finish are one request.",
  tags: ["calls"],
  auth: "agent",
  params: RunParams,
  body: ZCompleteRunBody.optional(),
  response: z.object({ run: ZRunWire, previous: ZPreviousRecorded }),
  example: { previous: { stepId: "stp_0mx90bxe00zsrtg8me5", outcome: "confirmed", externalRef: "TCK-1042", result: { id: "TCK-1042" }, attempts: 1 } },
});

export const nextUnwindAction = defineEndpoint({
  method: "POST",
  path: "/api/v1/runs/:runId/unwind/next",
  operationId: "nextUnwindAction",
  summary: "The next thing a worker does for the run's unwind: reconcile a step, compensate one, or nothing (done)",
  description:
    "For workers in any language. The server walks the log in reverse and decides the order, what is skipped, the escalations, the corrections and the final status; " +
    "the worker only does what needs the connector, and reports it (/steps/{stepId}/reconcile, /steps/{stepId}/compensation). A worker token needs a claimed task of the run.",
  tags: ["calls"],
  auth: "agent",
  params: RunParams,
  body: z.object({
    reason: z.string().trim().min(1).max(1000),
    skipStepIds: z.array(z.string().min(1)).max(10_000).optional().describe("Steps to leave as they are (an UNWIND task's payload.skipStepIds: a whole-run revoke's steps past their window)."),
    draftedBy: ZDraftedBy.nullish().describe("An UNWIND task's payload.draftedBy, recorded on the corrections the unwind drafts."),
  }),
  response: ZUnwindActionWire,
  example: { reason: "the customer cancelled the trip" },
});

export const nextCompensateAction = defineEndpoint({
  method: "POST",
  path: "/api/v1/steps/:stepId/compensate/next",
  operationId: "nextCompensateAction",
  summary: "The next thing a worker does to pull back one step (a revoke): reconcile it, compensate it, or nothing (done)",
  description:
    "For workers in any language, with a claimed COMPENSATE task of the step's run. The server decides as an unwind does; the worker only looks the key up or sends the compensation and reads it back, " +
    "and reports it (/steps/{stepId}/reconcile, /steps/{stepId}/compensation). `draftedBy` (the task's payload) is recorded on the correction an audience that saw the effect needs.",
  tags: ["calls"],
  auth: "agent",
  params: StepParams,
  body: z.object({ draftedBy: ZDraftedBy.nullish() }),
  response: ZStepCompensateActionWire,
  example: { draftedBy: "revoke:rvk_0mx4v1igxd71987" },
});

export const reportCompensation = defineEndpoint({
  method: "POST",
  path: "/api/v1/steps/:stepId/compensation",
  operationId: "reportCompensation",
  summary: "Report a compensation the worker sent and read back: in effect, or not (with what is still out there)",
  tags: ["calls"],
  auth: "agent",
  params: StepParams,
  body: ZCompensationReportBody,
  response: z.object({ step: ZStepWire }),
  example: { done: true, compensationRef: "cancel-7731", how: "read back" },
});
