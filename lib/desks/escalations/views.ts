/**
 * What the escalation desk's use cases return (the queue, an item, a claim, a check of the real system, a
 * resolution): plain JSON, dates as ISO strings, so a server component's first paint and a client's
 * polling read the same shape; the route contracts (lib/delivery/contracts/dashboard.ts) parse
 * responses with them.
 */
import { z } from "zod";
import {
  ZCompensationState,
  ZEscalationKind,
  ZEscalationStatus,
  ZIsoDate,
  ZJson,
  ZManualRepairWire,
  ZStepStanding,
  ZStepStatus,
  ZToolClass,
} from "@/packages/client/src/protocol/schemas/saga";
import { ZExternalSystem, ZRunRef } from "@/lib/desks/dashboard/views";

/** One row of the escalation queue. */
export const ZEscalationQueueItem = z.object({
  /** `esc_...` */
  id: z.string(),
  /** What kind of decision is needed. */
  kind: ZEscalationKind,
  /** Open, claimed or resolved. */
  status: ZEscalationStatus,
  /** One line. */
  title: z.string(),
  /** The run. */
  run: z.object({ id: z.string(), title: z.string() }),
  /** The step concerned. */
  step: z.object({ id: z.string(), stepIdx: z.number().int(), tool: z.string() }).nullable(),
  /** The tool concerned (the step's, or the held call's). */
  tool: z.string().nullable(),
  /** The system it acts on. */
  system: ZExternalSystem.nullable(),
  /** Routed to (the tool's owner). */
  owner: z.string().nullable(),
  /**
   * A held call (APPROVAL_REQUIRED): what it does in words, who would see it, its class, and its exact
   * arguments (a bulk approval shows them, so calls of one tool from different runs can be told apart).
   */
  heldCall: z.object({ call: z.string(), seenBy: z.string(), toolClass: z.string().nullable(), args: ZJson }).nullable(),
  /** Whether the signed-in person may claim and resolve it (set on the queue's and the item's reads). */
  canWork: z.boolean().optional(),
  /** Who holds it. */
  claimedBy: z.string().nullable(),
  /** Since when. */
  claimedAt: ZIsoDate.nullable(),
  /** Raised. */
  createdAt: ZIsoDate,
  /** Seconds since it was raised (until resolved). */
  ageSeconds: z.number().int(),
  /** Who resolved it. */
  resolvedBy: z.string().nullable(),
  /** When. */
  resolvedAt: ZIsoDate.nullable(),
});
/** One row of the escalation queue. */
export type TEscalationQueueItem = z.infer<typeof ZEscalationQueueItem>;

/** One page of the escalation queue. */
export const ZEscalationQueue = z.object({
  /** The items: oldest first while open (the queue's order), newest first once resolved. */
  items: z.array(ZEscalationQueueItem),
  /** Pass as `cursor` for the next page; null on the last one. */
  nextCursor: z.string().nullable(),
  /** Unresolved items per kind (whatever the filters). */
  openByKind: z.record(ZEscalationKind, z.number().int()),
  /** Unresolved items nobody holds yet. */
  unclaimed: z.number().int(),
  /** Items the signed-in user holds. */
  mine: z.number().int(),
  /** The signed-in user's id in `claimedBy` (their email). */
  me: z.string(),
  /** The server's clock. */
  now: ZIsoDate,
  /** What the signed-in user may do here. */
  abilities: z.object({ canClaim: z.boolean(), canResolve: z.boolean() }),
});
/** One page of the escalation queue. */
export type TEscalationQueue = z.infer<typeof ZEscalationQueue>;

/** The step an escalation is about, with what is still out there. */
export const ZEscalationStep = z.object({
  /** `stp_...` */
  id: z.string(),
  /** Position in the run. */
  stepIdx: z.number().int(),
  /** Tool name. */
  tool: z.string(),
  /** Tool class at dispatch. */
  toolClass: ZToolClass,
  /** Where the row stands. */
  status: ZStepStatus,
  /** Where it stands for a person: its status, or REPAIRED_BY_HAND (the one rule, packages/client/src/saga/step-standing.ts). */
  standing: ZStepStanding,
  /** The key the external system knows the effect by. */
  stepKey: z.string(),
  /** The call's arguments. */
  args: ZJson,
  /** The external system's id for the effect. */
  externalRef: z.string().nullable(),
  /** What the call returned (or a settlement recorded). */
  result: ZJson.nullable(),
  /** Why it failed or is unknown. */
  error: ZJson.nullable(),
  /** Who could see it. */
  audience: z.array(z.string()),
  /** The pre-written compensation. */
  compensation: z.object({ tool: z.string(), args: ZJson }).nullable(),
  /** Requested is not confirmed. */
  compensationState: ZCompensationState,
  /** The compensation's external id. */
  compensationRef: z.string().nullable(),
  /** Why the compensation failed, and what is still out there. */
  compensationError: ZJson.nullable(),
  /** A person answered the effect by hand: who, when, with what reference. */
  manualRepair: ZManualRepairWire.nullable(),
  /** Logged (database clock). */
  createdAt: ZIsoDate,
  /** Last changed. */
  updatedAt: ZIsoDate,
});

/** One escalation with everything its resolution form needs. */
export const ZEscalationDetail = z.object({
  escalation: ZEscalationQueueItem.extend({
    /** Everything the raiser wrote down: held call, remaining state, lookup error. */
    detail: ZJson,
    /** What was decided. */
    resolution: ZJson.nullable(),
  }),
  /** The run. */
  run: ZRunRef,
  /** The step concerned, if any. */
  step: ZEscalationStep.nullable(),
  /** The held call (APPROVAL_REQUIRED). */
  heldCall: z
    .object({
      tool: z.string(),
      toolClass: z.string().nullable(),
      args: ZJson,
      reason: z.string().nullable(),
      message: z.string().nullable(),
      /** Who would see its effect (the tool's rule, else the tool table's), null when neither says: customer-facing. */
      audience: z.array(z.string()).nullable(),
      /** Where that audience came from. */
      audienceSource: z.enum(["tool", "tool_table", "unknown"]),
    })
    .nullable(),
  /** The signed-in user's id in `claimedBy`. */
  me: z.string(),
  /** The server's clock. */
  now: ZIsoDate,
  /** What the signed-in user may do here. */
  abilities: z.object({
    canClaim: z.boolean(),
    canResolve: z.boolean(),
    /** True when the signed-in user holds the claim (only the claimer resolves). */
    isClaimer: z.boolean(),
  }),
});
/** One escalation with everything its resolution form needs. */
export type TEscalationDetail = z.infer<typeof ZEscalationDetail>;

/** A claim or release: refused claims are values that say who holds the item. */
export const ZClaimResult = z.union([
  z.object({ ok: z.literal(true), escalation: ZEscalationQueueItem }),
  z.object({
    ok: z.literal(false),
    /** Someone else holds it. */
    reason: z.literal("held"),
    heldBy: z.string(),
    heldByName: z.string().nullable(),
    claimedAt: ZIsoDate.nullable(),
  }),
  z.object({ ok: z.literal(false), reason: z.literal("resolved"), resolvedBy: z.string().nullable() }),
  z.object({ ok: z.literal(false), reason: z.literal("not_claimed") }),
]);
/** A claim or release outcome. */
export type TClaimResult = z.infer<typeof ZClaimResult>;

/** What looking the step's key up in the real system found (nothing is changed). */
export const ZRealSystemCheck = z.object({
  escalationId: z.string(),
  /** The tool whose lookup ran. */
  tool: z.string(),
  /** The system asked. */
  system: ZExternalSystem,
  /** The key looked up. */
  stepKey: z.string(),
  /** True when the effect exists. */
  found: z.boolean(),
  /** Its external id. */
  externalRef: z.string().nullable(),
  /** What the lookup returned. */
  result: ZJson.nullable(),
  /** Lookups made (a second one after a pause when the first found nothing: search indexes lag). */
  lookups: z.number().int(),
  /** Why the lookup could not answer, when it failed. */
  error: z.string().nullable(),
  /** When. */
  checkedAt: ZIsoDate,
  /** The step's status at the time (unchanged by the check). */
  stepStatus: ZStepStatus,
  /** Where the lookup ran: "this server", or the worker (`worker-1`) that holds the tool's connector. */
  checkedBy: z.string(),
});
/** What a check of the real system found. */
export type TRealSystemCheck = z.infer<typeof ZRealSystemCheck>;

/**
 * Where a check of the real system stands. The lookup runs where the tool's connector is: on this
 * server when it holds one (the demo), else on a worker that does, through a LOOKUP task.
 */
export const ZRealSystemCheckState = z.discriminatedUnion("state", [
  /** Nobody has asked yet (for this step, through a worker). */
  z.object({ state: z.literal("none") }),
  /** Asked a worker; no answer yet. */
  z.object({
    state: z.literal("waiting"),
    /** The LOOKUP task. */
    taskId: z.string(),
    /** The tool whose connector is needed. */
    tool: z.string(),
    /** The system it looks in. */
    system: ZExternalSystem,
    /** When it was asked. */
    askedAt: ZIsoDate,
    /** Who asked (`user:<email>`). */
    askedBy: z.string(),
    /** The worker working it now; null while no worker holding the tool has claimed it. */
    claimedBy: z.string().nullable(),
  }),
  /** The lookup answered. */
  z.object({ state: z.literal("checked"), check: ZRealSystemCheck }),
  /** The worker could not run the lookup (a permanent error, or out of attempts). */
  z.object({ state: z.literal("failed"), taskId: z.string(), tool: z.string(), system: ZExternalSystem, error: z.string(), at: ZIsoDate }),
]);
/** Where a check of the real system stands. */
export type TRealSystemCheckState = z.infer<typeof ZRealSystemCheckState>;

/** The outcome of a resolution: refusals a person can act on are values. */
export const ZResolveResult = z.union([
  z.object({ ok: z.literal(true), escalation: ZEscalationQueueItem }),
  z.object({
    ok: z.literal(false),
    /** Only the person holding the claim may resolve; claim it first (or ask `heldBy`). */
    reason: z.literal("not_claimer"),
    heldBy: z.string().nullable(),
  }),
  z.object({ ok: z.literal(false), reason: z.literal("resolved"), resolvedBy: z.string().nullable() }),
]);
/** The outcome of a resolution. */
export type TResolveResult = z.infer<typeof ZResolveResult>;

/** One item of a bulk decision: each is decided (and recorded) on its own. */
export const ZBulkDecisionItem = z.object({
  escalationId: z.string(),
  /** decided: recorded now; skipped: already decided, or held by someone else (nothing was changed); failed: an error, nothing was changed. */
  outcome: z.enum(["decided", "skipped", "failed"]),
  /** Why it was skipped or failed, in words. */
  message: z.string().nullable(),
});

/** The outcome of a bulk decision on held calls. */
export const ZBulkDecisionResult = z.object({
  /** Per item, in the order asked. */
  items: z.array(ZBulkDecisionItem),
  decided: z.number().int(),
  skipped: z.number().int(),
  failed: z.number().int(),
});
/** The outcome of a bulk decision on held calls. */
export type TBulkDecisionResult = z.infer<typeof ZBulkDecisionResult>;
