/** Wire format of a worker task: one shape per kind, its payload the schema the worker reads it with. */
import * as z from "zod";
import { ZLookupPayload } from "../tasks/lookup-task";
import { ZSendCorrectionPayload } from "../tasks/send-correction-payload";
import { ZCommitPlanPayload, ZCompensatePayload, ZUnwindPayload } from "../tasks/task";
import { WORKER_TASK_STATUSES, WorkerTaskKind, type WorkerTaskStatus } from "../tasks/vocabulary";
import { ZIsoDate, ZJson, toWire } from "./saga";

/**
 * Each kind's payload, as the worker reads it (packages/client/src/agent/worker.ts parses with these same schemas).
 * Loose: fields a newer server adds reach an older worker untouched.
 */
export const TASK_PAYLOAD_SCHEMAS = {
  [WorkerTaskKind.UNWIND]: ZUnwindPayload.loose(),
  [WorkerTaskKind.RECONCILE]: ZJson,
  [WorkerTaskKind.COMPENSATE]: ZCompensatePayload.loose(),
  [WorkerTaskKind.LOOKUP]: ZLookupPayload.loose(),
  [WorkerTaskKind.SEND_CORRECTION]: ZSendCorrectionPayload.loose(),
  [WorkerTaskKind.COMMIT_PLAN]: ZCommitPlanPayload.loose(),
} satisfies Record<WorkerTaskKind, z.ZodType>;

const taskFields = {
  id: z.string(),
  runId: z.string(),
  stepId: z.string().nullable(),
  tools: z.array(z.string()),
  status: z.enum(WORKER_TASK_STATUSES as [WorkerTaskStatus, ...WorkerTaskStatus[]]),
  attempt: z.number().int(),
  claimedBy: z.string().nullable(),
  leaseUntil: ZIsoDate.nullable(),
  dedupeKey: z.string(),
  result: ZJson.nullable(),
  error: ZJson.nullable(),
  createdAt: ZIsoDate,
  updatedAt: ZIsoDate,
};

const TASK_NAMES = {
  UNWIND: "UnwindTask",
  RECONCILE: "ReconcileTask",
  COMPENSATE: "CompensateTask",
  LOOKUP: "LookupTask",
  SEND_CORRECTION: "SendCorrectionTask",
  COMMIT_PLAN: "CommitPlanTask",
} satisfies Record<WorkerTaskKind, string>;

const taskOf = <K extends WorkerTaskKind>(kind: K) =>
  z.object({ ...taskFields, kind: z.literal(kind), payload: TASK_PAYLOAD_SCHEMAS[kind] }).meta({ id: TASK_NAMES[kind], description: `A ${kind} task.` });

/** A worker task on the wire, discriminated by `kind`: its payload is typed per kind. */
export const ZTaskWire = z.discriminatedUnion("kind", [
  taskOf(WorkerTaskKind.UNWIND),
  taskOf(WorkerTaskKind.RECONCILE),
  taskOf(WorkerTaskKind.COMPENSATE),
  taskOf(WorkerTaskKind.LOOKUP),
  taskOf(WorkerTaskKind.SEND_CORRECTION),
  taskOf(WorkerTaskKind.COMMIT_PLAN),
]).meta({ id: "WorkerTask", description: "A worker task; `kind` says which, and its payload's shape.", discriminator: { propertyName: "kind" } });

/** Whether a task's payload fits its kind's schema (a task that does not is failed, never handed out). */
export function payloadFits(task: { kind: string; payload: unknown }): boolean {
  const schema = (TASK_PAYLOAD_SCHEMAS as Record<string, z.ZodType>)[task.kind];
  return schema !== undefined && schema.safeParse(task.payload).success;
}

/** A task record on the wire (its payload is checked against its kind when the response is parsed). */
export function taskToWire(task: object): z.input<typeof ZTaskWire> {
  return toWire(task) as z.input<typeof ZTaskWire>;
}
