/** Contracts of the worker API: request an unwind, claim tasks with a lease, settle them fenced. */
import * as z from "zod";
import { defineEndpoint } from "../endpoint";
import { ZIsoDate, ZJson } from "../schemas/saga";
import { ZTaskWire } from "../schemas/worker";


const TaskParams = z.object({ taskId: z.string().min(1).max(80) });
const Fence = { attempt: z.number().int().min(1), workerId: z.string().trim().min(1).max(200) };
const SettleResponse = z.object({ settled: z.boolean(), task: ZTaskWire.nullable() });

export const requestUnwind = defineEndpoint({
  method: "POST",
  path: "/api/v1/runs/:runId/unwind",
  operationId: "requestUnwind",
  summary: "Ask a worker to unwind the run (reconcile, then compensate in reverse); one task per run",
  tags: ["worker"],
  auth: "agent",
  params: z.object({ runId: z.string().min(1).max(80) }),
  body: z.object({ reason: z.string().trim().min(1).max(1000) }),
  example: { reason: "the warehouse refused the reship" },
  response: z.object({ created: z.boolean(), task: ZTaskWire }),
  successStatus: 202,
  otherSuccessStatuses: [200],
});

export const claimWorkerTasks = defineEndpoint({
  method: "POST",
  path: "/api/v1/worker/claim",
  operationId: "claimWorkerTasks",
  summary: "Claim tasks the worker's tools cover, each with a lease and a fencing token (`attempt`)",
  description: "Worker tokens only. Tasks needing a tool outside the token's scope are never handed out.",
  tags: ["worker"],
  auth: "agent",
  body: z.object({
    workerId: z.string().trim().min(1).max(200),
    tools: z.array(z.string().min(1)).max(1000).optional(),
    max: z.number().int().min(1).max(100).default(4),
    leaseMs: z.number().int().min(100).max(3_600_000).default(30_000),
  }),
  example: { workerId: "refund-worker-1", max: 4, leaseMs: 30000 },
  response: z.object({ tasks: z.array(ZTaskWire) }),
});

export const completeWorkerTask = defineEndpoint({
  method: "POST",
  path: "/api/v1/worker/tasks/:taskId/complete",
  operationId: "completeWorkerTask",
  summary: "Mark a held task DONE; a stale fencing token changes nothing (`settled: false`)",
  tags: ["worker"],
  auth: "agent",
  params: TaskParams,
  body: z.object({ ...Fence, result: ZJson }),
  example: { attempt: 1, workerId: "refund-worker-1", result: { status: "UNWOUND", compensated: [1, 0] } },
  response: SettleResponse,
});

export const failWorkerTask = defineEndpoint({
  method: "POST",
  path: "/api/v1/worker/tasks/:taskId/fail",
  operationId: "failWorkerTask",
  summary: "Mark a held task FAILED, or hand it back (retry) for another attempt",
  tags: ["worker"],
  auth: "agent",
  params: TaskParams,
  body: z.object({ ...Fence, error: ZJson, retry: z.boolean() }),
  example: { attempt: 1, workerId: "refund-worker-1", error: { message: "payments answered 503" }, retry: true },
  response: SettleResponse,
});

export const heartbeatWorkerTask = defineEndpoint({
  method: "POST",
  path: "/api/v1/worker/tasks/:taskId/heartbeat",
  operationId: "heartbeatWorkerTask",
  summary: "Extend the lease of a held task; `extended: false` means stop: it was taken over",
  tags: ["worker"],
  auth: "agent",
  params: TaskParams,
  body: z.object({ ...Fence, leaseMs: z.number().int().min(100).max(3_600_000) }),
  example: { attempt: 1, workerId: "refund-worker-1", leaseMs: 30000 },
  response: z.object({ extended: z.boolean(), leaseUntil: ZIsoDate.nullable(), task: ZTaskWire.nullable() }),
});
