/**
 * What the pivot desk's use cases return (the pivot screen, a decision, an edit): plain JSON, dates as ISO
 * strings, so a server component's first paint and a client's polling read the same shape; the route
 * contracts (lib/delivery/contracts/dashboard.ts) parse responses with them.
 */
import { z } from "zod";
import {
  ZCompensationState,
  ZIsoDate,
  ZJson,
  ZPivotEditWire,
  ZPivotRejectionCode,
  ZPivotStatus,
  ZRunStatus,
  ZStepStatus,
  ZToolClass,
} from "@/packages/client/src/protocol/schemas/saga";
import { ZExternalSystem, ZAudienceRank, ZRunRef } from "@/lib/desks/dashboard/views";
import { ZPivotApprovals } from "@/lib/desks/approvals/views";

/** One staged effect a reviewer approves the pivot on top of, and how it would be released. */
export const ZStagedEffect = z.object({
  /** `stp_...` */
  stepId: z.string(),
  /** Position in the run. */
  stepIdx: z.number().int(),
  /** Tool name. */
  tool: z.string(),
  /** Tool class at dispatch. */
  toolClass: ZToolClass,
  /** The external system the effect lives in. */
  system: ZExternalSystem,
  /** Where the row stands now (a staged effect may have been released since). */
  status: ZStepStatus,
  /** The call's arguments. */
  args: ZJson,
  /** The step key (sent to the external system). */
  stepKey: z.string(),
  /** The external system's id for the effect. */
  externalRef: z.string().nullable(),
  /** Who could see it. */
  audience: z.array(z.string()),
  /** Its blast radius. */
  audienceRank: ZAudienceRank,
  /** What releasing it takes: the pre-written compensation (tool + args), null when none. */
  release: z.object({ tool: z.string(), args: ZJson }).nullable(),
  /** Where that compensation stands. */
  compensationState: ZCompensationState,
  /** When it was staged (the revocation window runs from here). */
  stagedAt: ZIsoDate,
  /** The tool's current revocation window, seconds (null: none). */
  revocationWindowSec: z.number().int().nullable(),
  /** Where the window came from: the tool table, or the class default when the tool has no row. */
  windowSource: z.enum(["tool_table", "registry_default"]),
  /** stagedAt + window: until when it can be released (null: no window known). */
  revocableUntil: ZIsoDate.nullable(),
  /** The earlier of revocableUntil and the pivot's deadline. */
  releasableUntil: ZIsoDate.nullable(),
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
  toolClass: ZToolClass,
  /** The external system it acts on. */
  system: ZExternalSystem,
  /** The exact arguments approved. */
  args: ZJson,
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
  status: ZPivotStatus,
  /** The agent's summary. */
  summary: z.string(),
  /** Hash of the plan and policy versions: a decision must name it. */
  planHash: z.string(),
  /** When the staged effects stop being releasable (an authorisation hold expires). */
  deadline: ZIsoDate.nullable(),
  /** Requested. */
  createdAt: ZIsoDate,
  /** Who decided. */
  decidedBy: z.string().nullable(),
  /** When. */
  decidedAt: ZIsoDate.nullable(),
  /** Why (a rejection's reason goes back to the agent). */
  reason: z.string().nullable(),
  /** A rejection's code for the agent (what it should do next), null otherwise. */
  reasonCode: ZPivotRejectionCode.nullable(),
  /** Reviewers' edits of plan items before the decision, oldest first. */
  edits: z.array(ZPivotEditWire),
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
  /** The earliest moment a staged effect still releasable now stops being releasable (or the deadline), null when none. */
  releasableUntil: ZIsoDate.nullable(),
  /** Staged effects whose window closed before anything released them: they can no longer be released. */
  expiredStaged: z.number().int(),
  /**
   * The one deadline of the decision, as the SLA banner counts it: when the pivot is rejected if nobody
   * decides (the SLA rule's expiry, brought forward by the agent's deadline), else the agent's deadline.
   */
  decideBy: z.object({
    /** When; null: nothing limits the wait. */
    at: ZIsoDate.nullable(),
    /** True when the pivot is rejected at `at` if nobody decides (never approved by default). */
    rejectsAutomatically: z.boolean(),
    /** The deadline the agent asked for, when it gave one (it may come after the SLA's expiry). */
    agentDeadline: ZIsoDate.nullable(),
    /** The SLA rule that applies (`default:pivot`, `tool:send_email`). */
    rule: z.string(),
  }),
  /** The run's other pivots, oldest first. */
  otherPivots: z.array(z.object({ id: z.string(), status: ZPivotStatus, createdAt: ZIsoDate })),
  /** Once approved: the step that carries each plan item a commit has begun (the latest, by plan position). */
  committed: z.array(z.object({ idx: z.number().int(), stepIdx: z.number().int(), status: ZStepStatus })),
  /** The server's clock when this was read. */
  now: ZIsoDate,
  /** What the signed-in user may do here. */
  abilities: z.object({ canDecide: z.boolean() }),
  /** How many people must approve this plan (two where the tool table says so) and who already did. */
  approvals: ZPivotApprovals,
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
  status: ZPivotStatus,
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
    runStatus: ZRunStatus,
  }),
  z.object({
    ok: z.literal(false),
    /**
     * second_approver_needed: this approval is recorded, and the plan needs another person's too (a
     * tool of the plan asks for two approvers); same_approver: this person already approved this plan,
     * so nothing was recorded (the second approval must be someone else's).
     */
    reason: z.enum(["second_approver_needed", "same_approver"]),
    approvals: ZPivotApprovals,
  }),
]);
/** The outcome of approving or rejecting a pivot. */
export type TPivotDecisionResult = z.infer<typeof ZPivotDecisionResult>;

/** The outcome of editing a plan item: the pivot screen as it is after the edit, or why nothing changed. */
export const ZEditPlanItemResult = z.union([
  z.object({ ok: z.literal(true), edit: ZPivotEditWire, screen: ZPivotScreen }),
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

