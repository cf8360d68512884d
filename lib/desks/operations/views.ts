/**
 * What the operations page shows the people who run Sagaboard: whether its own machinery is healthy
 * (workers, the task queue, the notifier, stuck runs, the sweeps), not the agents' work (/overview).
 */
import { z } from "zod";
import { ZIsoDate } from "@/packages/client/src/protocol/schemas/saga";

/** One worker, as its tasks show it (a worker is known by the id it claims tasks under). */
export const ZOperationsWorker = z.object({
  /** The id it claims under. */
  id: z.string(),
  /** Its newest claim, heartbeat or settle. */
  lastSeen: ZIsoDate,
  /** Tools of the tasks it took in the last day. */
  tools: z.array(z.string()),
  /** Tasks it finished in the last hour. */
  doneLastHour: z.number().int(),
  /** Tasks it gave up in the last hour. */
  failedLastHour: z.number().int(),
  /** Tasks it holds now under a live lease. */
  holding: z.number().int(),
});

/** The operations page's figures, read in one go on the database clock. */
export const ZOperations = z.object({
  /** The database clock when read. */
  now: ZIsoDate,
  /** Workers seen in the last day, most recent first. */
  workers: z.array(ZOperationsWorker),
  /** The worker task queue. */
  tasks: z.object({
    /** Waiting for a worker whose tools cover them. */
    waiting: z.number().int(),
    /** Held under a live lease. */
    leased: z.number().int(),
    /** Held under a lease that ran out: claimable again. */
    leaseExpired: z.number().int(),
    /** Given up in the last hour. */
    failedLastHour: z.number().int(),
    /** When the oldest waiting task was queued. */
    oldestWaitingSince: ZIsoDate.nullable(),
  }),
  /** The notifier (webhooks and email). */
  notifier: z.object({
    /** Events not yet fanned out to their deliveries. */
    eventsPending: z.number().int(),
    /** Deliveries due or being sent. */
    deliveriesPending: z.number().int(),
    /** Deliveries that gave up (an admin may replay them). */
    deliveriesFailed: z.number().int(),
    /** The newest error a delivery recorded, with where it went. */
    lastError: z.object({ target: z.string(), channel: z.string(), error: z.string(), at: ZIsoDate }).nullable(),
  }),
  /** Runs people must look at. */
  runs: z.object({
    /** Approved runs whose agent went quiet (open STUCK_AFTER_PIVOT items). */
    stuck: z.number().int(),
    /** Runs waiting for people. */
    needsAttention: z.number().int(),
    /** Steps whose outcome nobody knows. */
    unknownSteps: z.number().int(),
  }),
  /** What the background sweeps last left behind (they record no heartbeat of their own). */
  sweeps: z.object({
    /** The SLA sweep's newest reminder or breach mark. */
    lastSlaMark: ZIsoDate.nullable(),
    /** The stuck-run sweep's newest raised item. */
    lastStuckRaised: ZIsoDate.nullable(),
  }),
});
/** The operations page's figures. */
export type TOperations = z.infer<typeof ZOperations>;
