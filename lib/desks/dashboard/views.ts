/**
 * What the dashboard's use cases return: plain JSON (dates as ISO strings), so a server component's
 * first paint and a client component's polling read the same shape. Types are inferred from these
 * schemas; the route contracts (lib/delivery/contracts/dashboard.ts) parse responses with them.
 */
import { z } from "zod";
import {
  CompensationStateSchema,
  EscalationKindSchema,
  EscalationStatusSchema,
  IsoDate,
  JsonSchema,
  ManualRepairWire,
  PivotEditWire,
  PivotRejectionCodeSchema,
  PivotStatusSchema,
  RunStatusSchema,
  StepStatusSchema,
  ToolClassSchema,
} from "@/lib/protocol/schemas/saga";

/** The external system a tool acts on. */
export const ZExternalSystem = z.string().min(1);

/** Blast radius of an audience (lib/saga/vocabulary audienceRank): 0 internal, 1 partner, 2 customer. */
export const ZAudienceRank = z.number().int().min(0).max(2);

/** A run, as the dashboard names it in headers and links. */
export const ZRunRef = z.object({
  /** `run_...` */
  id: z.string(),
  /** What the run is for. */
  title: z.string(),
  /** The agent running it. */
  agent: z.string(),
  /** The customer or user the agent acts for. */
  onBehalfOf: z.string().nullable(),
  /** Where the run stands. */
  status: RunStatusSchema,
});

// ---------------------------------------------------------------------------------------------
// Pivot screen

/** One staged effect a reviewer approves the pivot on top of, and how it would be released. */
export const ZStagedEffect = z.object({
  /** `stp_...` */
  stepId: z.string(),
  /** Position in the run. */
  stepIdx: z.number().int(),
  /** Tool name. */
  tool: z.string(),
  /** Tool class at dispatch. */
  toolClass: ToolClassSchema,
  /** The external system the effect lives in. */
  system: ZExternalSystem,
  /** Where the row stands now (a staged effect may have been released since). */
  status: StepStatusSchema,
  /** The call's arguments. */
  args: JsonSchema,
  /** The step key (sent to the external system). */
  stepKey: z.string(),
  /** The external system's id for the effect. */
  externalRef: z.string().nullable(),
  /** Who could see it. */
  audience: z.array(z.string()),
  /** Its blast radius. */
  audienceRank: ZAudienceRank,
  /** What releasing it takes: the pre-written compensation (tool + args), null when none. */
  release: z.object({ tool: z.string(), args: JsonSchema }).nullable(),
  /** Where that compensation stands. */
  compensationState: CompensationStateSchema,
  /** When it was staged (the revocation window runs from here). */
  stagedAt: IsoDate,
  /** The tool's current revocation window, seconds (null: none). */
  revocationWindowSec: z.number().int().nullable(),
  /** Where the window came from: the tool table, or the class default when the tool has no row. */
  windowSource: z.enum(["tool_table", "registry_default"]),
  /** stagedAt + window: until when it can be released (null: no window known). */
  revocableUntil: IsoDate.nullable(),
  /** The earlier of revocableUntil and the pivot's deadline. */
  releasableUntil: IsoDate.nullable(),
  /** True when it was already released or never happened (nothing left to release). */
  settled: z.boolean(),
});
/** One staged effect of a pivot. */
export type TStagedEffect = z.infer<typeof ZStagedEffect>;

/** One call of the commit plan, with the tool's policy then and now. */
export const ZPlanItemView = z.object({
  /** Position in the plan, from 0. */
  idx: z.number().int(),
  /** Tool name. */
  tool: z.string(),
  /** Tool class (irreversible items are highlighted). */
  toolClass: ToolClassSchema,
  /** The external system it acts on. */
  system: ZExternalSystem,
  /** The exact arguments approved. */
  args: JsonSchema,
  /** Their hash. */
  argsHash: z.string(),
  /** The tool's policy version when the plan was made. */
  planPolicyVersion: z.number().int(),
  /** The tool's policy version now. */
  currentPolicyVersion: z.number().int(),
  /** True when an admin changed the tool's policy since the plan was made. */
  policyChanged: z.boolean(),
  /** Who will see the effect (the tool's audience rule, else the tool table's), null when neither says. */
  audience: z.array(z.string()).nullable(),
  /** Blast radius of that audience; an unknown audience counts as customer-facing (2). */
  audienceRank: ZAudienceRank,
  /** Where the audience came from: the tool's own rule, the tool table's audience rule, or nowhere (treated as customer-facing). */
  audienceSource: z.enum(["tool", "tool_table", "unknown"]),
  /** Whether the reviewer may edit this item's arguments here (the tool's schema is known to this server). */
  editable: z.boolean(),
  /** Arguments a reviewer may not change (who or what it acts on, unless the tool table opens them). */
  lockedArgs: z.array(z.string()),
  /** What answers the effect if it must be undone: a compensator, or null (irreversible: correction only). */
  answeredBy: z.string().nullable(),
});
/** One commit plan item as the pivot screen shows it. */
export type TPlanItemView = z.infer<typeof ZPlanItemView>;

/** A pivot's decision state. */
export const ZPivotSummary = z.object({
  /** `piv_...` */
  id: z.string(),
  /** The run. */
  runId: z.string(),
  /** Decision state. */
  status: PivotStatusSchema,
  /** The agent's summary. */
  summary: z.string(),
  /** Hash of the plan and policy versions: a decision must name it. */
  planHash: z.string(),
  /** When the staged effects stop being releasable (an authorisation hold expires). */
  deadline: IsoDate.nullable(),
  /** Requested. */
  createdAt: IsoDate,
  /** Who decided. */
  decidedBy: z.string().nullable(),
  /** When. */
  decidedAt: IsoDate.nullable(),
  /** Why (a rejection's reason goes back to the agent). */
  reason: z.string().nullable(),
  /** A rejection's code for the agent (what it should do next), null otherwise. */
  reasonCode: PivotRejectionCodeSchema.nullable(),
  /** Reviewers' edits of plan items before the decision, oldest first. */
  edits: z.array(PivotEditWire),
});
/** A pivot's decision state. */
export type TPivotSummary = z.infer<typeof ZPivotSummary>;

/** Everything a reviewer needs to decide one pivot in one look. */
export const ZPivotScreen = z.object({
  /** The pivot. */
  pivot: ZPivotSummary,
  /** Its run. */
  run: ZRunRef,
  /** Everything staged so far, by step index. */
  staged: z.array(ZStagedEffect),
  /** Staged step ids per external system, systems in first-staged order. */
  bySystem: z.array(z.object({ system: ZExternalSystem, stepIds: z.array(z.string()) })),
  /** Staged step ids per blast radius, lowest first. */
  byAudience: z.array(z.object({ rank: ZAudienceRank, label: z.string(), audience: z.array(z.string()), stepIds: z.array(z.string()) })),
  /** The commit plan. */
  plan: z.array(ZPlanItemView),
  /** Irreversible items in the plan. */
  irreversibleCount: z.number().int(),
  /** True when any plan item's tool policy changed since the plan was made (approval will be refused). */
  policyChanged: z.boolean(),
  /** The earliest moment a staged effect stops being releasable (or the deadline), null when none. */
  releasableUntil: IsoDate.nullable(),
  /** The run's other pivots, oldest first. */
  otherPivots: z.array(z.object({ id: z.string(), status: PivotStatusSchema, createdAt: IsoDate })),
  /** Once approved: the step that carries each plan item a commit has begun (the latest, by plan position). */
  committed: z.array(z.object({ idx: z.number().int(), stepIdx: z.number().int(), status: StepStatusSchema })),
  /** The server's clock when this was read. */
  now: IsoDate,
  /** What the signed-in user may do here. */
  abilities: z.object({ canDecide: z.boolean() }),
});
/** The pivot screen's data. */
export type TPivotScreen = z.infer<typeof ZPivotScreen>;

/** The plan as it is now, returned when a decision named an older plan hash. */
export const ZCurrentPlan = z.object({
  /** The current plan hash (decide again with it, after reviewing). */
  planHash: z.string(),
  /** The current summary. */
  summary: z.string(),
  /** Decision state. */
  status: PivotStatusSchema,
  /** The current items. */
  plan: z.array(ZPlanItemView),
});

/** Tools whose policy changed since the plan was made. */
export const ZPolicyChange = z.object({ tool: z.string(), planVersion: z.number().int(), currentVersion: z.number().int() });

/** The outcome of approving or rejecting a pivot: refusals a person can act on are values. */
export const ZPivotDecisionResult = z.union([
  z.object({ ok: z.literal(true), pivot: ZPivotSummary }),
  z.object({
    ok: z.literal(false),
    /** The plan (or a tool's policy) changed since the page loaded: review `current` and decide again. */
    reason: z.literal("plan_changed"),
    current: ZCurrentPlan,
    policyChanges: z.array(ZPolicyChange),
  }),
  z.object({
    ok: z.literal(false),
    /** Someone decided it first. */
    reason: z.literal("already_decided"),
    pivot: ZPivotSummary,
  }),
  z.object({
    ok: z.literal(false),
    /** The run stopped waiting for this pivot (the agent unwound it). */
    reason: z.literal("run_not_waiting"),
    runStatus: RunStatusSchema,
  }),
]);
/** The outcome of approving or rejecting a pivot. */
export type TPivotDecisionResult = z.infer<typeof ZPivotDecisionResult>;

/** The outcome of editing a plan item: the pivot screen as it is after the edit, or why nothing changed. */
export const ZEditPlanItemResult = z.union([
  z.object({ ok: z.literal(true), edit: PivotEditWire, screen: ZPivotScreen }),
  z.object({
    ok: z.literal(false),
    /**
     * plan_changed: the agent revised it or another reviewer edited it; already_decided; run_not_waiting;
     * unchanged: same arguments; argument_locked: the edit changes an argument the tool table keeps from reviewers.
     */
    reason: z.enum(["plan_changed", "already_decided", "run_not_waiting", "unchanged", "argument_locked"]),
    /** Who decided, when already decided. */
    decidedBy: z.string().nullable(),
    /** The arguments a reviewer may not change that the edit changed (argument_locked). */
    arguments: z.array(z.string()),
    /** What to do instead, naming the argument (argument_locked). */
    message: z.string().nullable(),
  }),
]);
/** The outcome of editing a plan item. */
export type TEditPlanItemResult = z.infer<typeof ZEditPlanItemResult>;

// ---------------------------------------------------------------------------------------------
// Escalations

/** One row of the escalation queue. */
export const ZEscalationQueueItem = z.object({
  /** `esc_...` */
  id: z.string(),
  /** What kind of decision is needed. */
  kind: EscalationKindSchema,
  /** Open, claimed or resolved. */
  status: EscalationStatusSchema,
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
  /** A held call (APPROVAL_REQUIRED): what it does in words, who would see it, and its class. */
  heldCall: z.object({ call: z.string(), seenBy: z.string(), toolClass: z.string().nullable() }).nullable(),
  /** Whether the signed-in person may claim and resolve it (set on the queue's and the item's reads). */
  canWork: z.boolean().optional(),
  /** Who holds it. */
  claimedBy: z.string().nullable(),
  /** Since when. */
  claimedAt: IsoDate.nullable(),
  /** Raised. */
  createdAt: IsoDate,
  /** Seconds since it was raised (until resolved). */
  ageSeconds: z.number().int(),
  /** Who resolved it. */
  resolvedBy: z.string().nullable(),
  /** When. */
  resolvedAt: IsoDate.nullable(),
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
  openByKind: z.record(EscalationKindSchema, z.number().int()),
  /** Unresolved items nobody holds yet. */
  unclaimed: z.number().int(),
  /** Items the signed-in user holds. */
  mine: z.number().int(),
  /** The signed-in user's id in `claimedBy` (their email). */
  me: z.string(),
  /** The server's clock. */
  now: IsoDate,
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
  toolClass: ToolClassSchema,
  /** Where the row stands. */
  status: StepStatusSchema,
  /** The key the external system knows the effect by. */
  stepKey: z.string(),
  /** The call's arguments. */
  args: JsonSchema,
  /** The external system's id for the effect. */
  externalRef: z.string().nullable(),
  /** What the call returned (or a settlement recorded). */
  result: JsonSchema.nullable(),
  /** Why it failed or is unknown. */
  error: JsonSchema.nullable(),
  /** Who could see it. */
  audience: z.array(z.string()),
  /** The pre-written compensation. */
  compensation: z.object({ tool: z.string(), args: JsonSchema }).nullable(),
  /** Requested is not confirmed. */
  compensationState: CompensationStateSchema,
  /** The compensation's external id. */
  compensationRef: z.string().nullable(),
  /** Why the compensation failed, and what is still out there. */
  compensationError: JsonSchema.nullable(),
  /** A person answered the effect by hand: who, when, with what reference. */
  manualRepair: ManualRepairWire.nullable(),
  /** Logged (database clock). */
  createdAt: IsoDate,
  /** Last changed. */
  updatedAt: IsoDate,
});

/** One escalation with everything its resolution form needs. */
export const ZEscalationDetail = z.object({
  escalation: ZEscalationQueueItem.extend({
    /** Everything the raiser wrote down: held call, remaining state, lookup error. */
    detail: JsonSchema,
    /** What was decided. */
    resolution: JsonSchema.nullable(),
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
      args: JsonSchema,
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
  now: IsoDate,
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
    claimedAt: IsoDate.nullable(),
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
  result: JsonSchema.nullable(),
  /** Lookups made (a second one after a pause when the first found nothing: search indexes lag). */
  lookups: z.number().int(),
  /** Why the lookup could not answer, when it failed. */
  error: z.string().nullable(),
  /** When. */
  checkedAt: IsoDate,
  /** The step's status at the time (unchanged by the check). */
  stepStatus: StepStatusSchema,
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
    askedAt: IsoDate,
    /** Who asked (`user:<email>`). */
    askedBy: z.string(),
    /** The worker working it now; null while no worker holding the tool has claimed it. */
    claimedBy: z.string().nullable(),
  }),
  /** The lookup answered. */
  z.object({ state: z.literal("checked"), check: ZRealSystemCheck }),
  /** The worker could not run the lookup (a permanent error, or out of attempts). */
  z.object({ state: z.literal("failed"), taskId: z.string(), tool: z.string(), system: ZExternalSystem, error: z.string(), at: IsoDate }),
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
