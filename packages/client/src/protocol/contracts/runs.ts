/** Contracts of the harness API: runs, steps, pivots, escalations, corrections, tools. */
import * as z from "zod";
import { defineEndpoint } from "../endpoint";
import {
  ZAuditBody,
  ZAuditEventWire,
  ZCorrectionWire,
  ZEscalationKind,
  ZEscalationStatus,
  ZEscalationWire,
  ZIsoDate,
  ZJson,
  ZPivotWire,
  ZRunStatus,
  ZRunWire,
  ZStepWire,
  ZToolClass,
  ZToolStatus,
} from "../schemas/saga";

const RunParams = z.object({ runId: z.string().min(1).max(80) });
const StepParams = z.object({ stepId: z.string().min(1).max(80) });
const tags = (t: string) => [t];

export const createRun = defineEndpoint({
  method: "POST",
  path: "/api/v1/runs",
  operationId: "createRun",
  summary: "Start a run for the calling agent",
  tags: tags("runs"),
  auth: "agent",
  body: z.object({
    title: z.string().min(1).max(200),
    onBehalfOf: z.string().max(200).nullable().optional(),
    metadata: ZJson.optional(),
  }),
  example: { title: "Refund and reship order 1182", onBehalfOf: "ada@example.com" },
  response: z.object({ run: ZRunWire }),
  successStatus: 201,
});

export const listRuns = defineEndpoint({
  method: "GET",
  path: "/api/v1/runs",
  operationId: "listRuns",
  summary: "The calling agent's runs, newest first",
  tags: tags("runs"),
  auth: "agent",
  query: z.object({
    status: ZRunStatus.optional(),
    cursor: z.string().max(80).optional(),
    take: z.coerce.number().int().min(1).max(200).default(50),
  }),
  response: z.object({ runs: z.array(ZRunWire), nextCursor: z.string().nullable() }),
});

export const getRun = defineEndpoint({
  method: "GET",
  path: "/api/v1/runs/:runId",
  operationId: "getRun",
  summary: "A run with its whole saga log (what resume reads)",
  tags: tags("runs"),
  auth: "agent",
  params: RunParams,
  response: z.object({
    run: ZRunWire,
    steps: z.array(ZStepWire),
    pivots: z.array(ZPivotWire),
    escalations: z.array(ZEscalationWire),
    corrections: z.array(ZCorrectionWire),
  }),
});

export const setRunStatus = defineEndpoint({
  method: "POST",
  path: "/api/v1/runs/:runId/status",
  operationId: "setRunStatus",
  summary: "Move the run (complete, unwinding, unwound); fenced on its current status",
  tags: tags("runs"),
  auth: "agent",
  params: RunParams,
  body: z.object({ from: z.array(ZRunStatus).nullable(), to: ZRunStatus, event: ZAuditBody }),
  example: { from: ["UNWINDING"], to: "NEEDS_ATTENTION", event: { type: "run.unwound", data: { reason: "the warehouse refused the reship" } } },
  response: z.object({ run: ZRunWire.nullable() }),
});

export const getRunAudit = defineEndpoint({
  method: "GET",
  path: "/api/v1/runs/:runId/audit",
  operationId: "getRunAudit",
  summary: "The run's hash-chained audit events",
  tags: tags("runs"),
  auth: "agent",
  params: RunParams,
  response: z.object({ events: z.array(ZAuditEventWire) }),
});

export const listSteps = defineEndpoint({
  method: "GET",
  path: "/api/v1/runs/:runId/steps",
  operationId: "listSteps",
  summary: "The run's saga log, by step index",
  tags: tags("steps"),
  auth: "agent",
  params: RunParams,
  response: z.object({ steps: z.array(ZStepWire) }),
});

export const getStep = defineEndpoint({
  method: "GET",
  path: "/api/v1/steps/:stepId",
  operationId: "getStep",
  summary: "One saga log row",
  tags: tags("steps"),
  auth: "agent",
  params: StepParams,
  response: z.object({ step: ZStepWire }),
});

export const requestPivot = defineEndpoint({
  method: "POST",
  path: "/api/v1/runs/:runId/pivots",
  operationId: "requestPivot",
  summary: "Ask for the one human approval: everything staged plus the commit plan",
  tags: tags("pivots"),
  auth: "agent",
  params: RunParams,
  body: z.object({
    summary: z.string().min(1).max(4000),
    plan: z.array(z.object({ tool: z.string().min(1).max(64), args: ZJson })).min(1).max(100),
    deadline: ZIsoDate.nullable().optional(),
  }),
  example: { summary: "Ticket opened and refund staged; email the customer the apology.", plan: [{ tool: "send_email", args: { to: "ada@example.com", subject: "Your refund", body: "We refunded order 1182." } }] },
  response: z.object({ pivot: ZPivotWire }),
  successStatus: 201,
});

export const listPivots = defineEndpoint({
  method: "GET",
  path: "/api/v1/runs/:runId/pivots",
  operationId: "listPivots",
  summary: "The run's pivots, oldest first",
  tags: tags("pivots"),
  auth: "agent",
  params: RunParams,
  response: z.object({ pivots: z.array(ZPivotWire) }),
});

export const getPivot = defineEndpoint({
  method: "GET",
  path: "/api/v1/pivots/:pivotId",
  operationId: "getPivot",
  summary: "A pivot and its decision; `waitMs` long-polls while it is PENDING (up to 30 s)",
  tags: tags("pivots"),
  auth: "agent",
  params: z.object({ pivotId: z.string().min(1).max(80) }),
  query: z.object({ waitMs: z.coerce.number().int().min(0).max(30_000).default(0) }),
  response: z.object({ pivot: ZPivotWire }),
});

const NewEscalationBody = z.object({
  stepId: z.string().nullable(),
  /** OUTCOME_UNKNOWN, COMPENSATION_FAILED or STUCK_AFTER_PIVOT (held calls and revokes are raised by the server). */
  kind: ZEscalationKind,
  title: z.string().min(1).max(300),
  detail: ZJson,
  /** Ignored for routing: an escalation goes to the tool table's owner of the step's tool. Kept as a note when it differs. */
  owner: z.string().max(100).nullable().optional(),
  /** A note for the person who works it. */
  note: z.string().max(1000).nullable().optional(),
  dedupeKey: z.string().min(1).max(300),
});

export const raiseEscalation = defineEndpoint({
  method: "POST",
  path: "/api/v1/runs/:runId/escalations",
  operationId: "raiseEscalation",
  summary: "Raise an item for people (deduplicated by dedupeKey); agents can raise, never resolve",
  description:
    "Routed to the tool table's owner of the step's tool (the agent's `owner` is only a note), which decides who may claim, check and resolve it. An agent raises OUTCOME_UNKNOWN, COMPENSATION_FAILED or STUCK_AFTER_PIVOT; APPROVAL_REQUIRED and REVOKE_OUT_OF_WINDOW (and dedupe keys starting with `hold:`) are the server's: 403.",
  tags: tags("escalations"),
  auth: "agent",
  params: RunParams,
  body: z.object({ escalation: NewEscalationBody, event: ZAuditBody }),
  example: { escalation: { stepId: null, kind: "OUTCOME_UNKNOWN", title: "Did the reship happen?", detail: { orderId: "1182" }, note: "The warehouse API timed out twice.", dedupeKey: "unknown:run_1182:reship" }, event: { type: "escalation.raised" } },
  response: z.object({ created: z.boolean(), escalation: ZEscalationWire }),
  successStatus: 201,
  otherSuccessStatuses: [200],
});

export const listEscalations = defineEndpoint({
  method: "GET",
  path: "/api/v1/runs/:runId/escalations",
  operationId: "listEscalations",
  summary: "The run's escalations, oldest first",
  tags: tags("escalations"),
  auth: "agent",
  params: RunParams,
  query: z.object({ status: z.union([ZEscalationStatus, z.array(ZEscalationStatus)]).optional() }),
  response: z.object({ escalations: z.array(ZEscalationWire) }),
});

export const findEscalation = defineEndpoint({
  method: "GET",
  path: "/api/v1/escalations",
  operationId: "findEscalation",
  summary: "The escalation with this dedupe key (of the calling agent's runs), or null",
  tags: tags("escalations"),
  auth: "agent",
  query: z.object({ dedupeKey: z.string().min(1).max(300) }),
  response: z.object({ escalation: ZEscalationWire.nullable() }),
});

export const getEscalation = defineEndpoint({
  method: "GET",
  path: "/api/v1/escalations/:escalationId",
  operationId: "getEscalation",
  summary: "One escalation",
  tags: tags("escalations"),
  auth: "agent",
  params: z.object({ escalationId: z.string().min(1).max(80) }),
  response: z.object({ escalation: ZEscalationWire }),
});

export const draftCorrection = defineEndpoint({
  method: "POST",
  path: "/api/v1/runs/:runId/corrections",
  operationId: "draftCorrection",
  summary: "Draft a correction message for support staff (one per step)",
  tags: tags("corrections"),
  auth: "agent",
  params: RunParams,
  body: z.object({
    correction: z.object({
      stepId: z.string().min(1),
      audience: z.array(z.string().min(1)).max(20),
      rank: z.number().int().min(0).max(2),
      subject: z.string().min(1).max(300),
      body: z.string().min(1).max(10_000),
    }),
    event: ZAuditBody,
  }),
  example: { correction: { stepId: "stp_0mx4p50lx324met89u7", audience: ["customer"], rank: 2, subject: "About your refund", body: "Please disregard our earlier email." }, event: { type: "correction.drafted" } },
  response: z.object({ correction: ZCorrectionWire }),
  successStatus: 201,
});

export const listCorrections = defineEndpoint({
  method: "GET",
  path: "/api/v1/runs/:runId/corrections",
  operationId: "listCorrections",
  summary: "The run's correction drafts, by audience rank",
  tags: tags("corrections"),
  auth: "agent",
  params: RunParams,
  response: z.object({ corrections: z.array(ZCorrectionWire) }),
});

export const listTools = defineEndpoint({
  method: "GET",
  path: "/api/v1/tools",
  operationId: "listTools",
  summary: "The tool table as the calling token may use it: class, compensator, policy version",
  tags: tags("tools"),
  auth: "agent",
  response: z.object({
    tools: z.array(
      z.object({
        name: z.string(),
        /** The class calls are decided with: IRREVERSIBLE (every call held) while the tool is unreviewed, whatever was declared. */
        toolClass: ZToolClass,
        compensator: z.string().nullable(),
        /** The team its escalations are routed to (null while unreviewed). */
        owner: z.string().nullable(),
        policyVersion: z.number().int(),
        revocationWindowSec: z.number().int().nullable(),
        /** REVIEWED, UNREVIEWED (declared or changed since its review: every call held) or DISABLED. */
        status: ZToolStatus,
        /** The hash of the definition its team last declared (packages/client/src/protocol/manifest.ts `definitionHash`); a reviewed row's is the reviewed one. Null: never declared. */
        definitionHash: z.string().nullable(),
      }),
    ),
  }),
});
