/** Wire format of a worker task. */
import * as z from "zod";
import { WORKER_TASK_KINDS, WORKER_TASK_STATUSES, type WorkerTaskKind, type WorkerTaskStatus } from "@/lib/worker/vocabulary";
import { IsoDate, JsonSchema } from "./saga";

/** A worker task on the wire. */
export const TaskWire = z.object({
  id: z.string(),
  kind: z.enum(WORKER_TASK_KINDS as [WorkerTaskKind, ...WorkerTaskKind[]]),
  runId: z.string(),
  stepId: z.string().nullable(),
  tools: z.array(z.string()),
  status: z.enum(WORKER_TASK_STATUSES as [WorkerTaskStatus, ...WorkerTaskStatus[]]),
  attempt: z.number().int(),
  claimedBy: z.string().nullable(),
  leaseUntil: IsoDate.nullable(),
  dedupeKey: z.string(),
  payload: JsonSchema,
  result: JsonSchema.nullable(),
  error: JsonSchema.nullable(),
  createdAt: IsoDate,
  updatedAt: IsoDate,
});
