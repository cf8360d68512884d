/**
 * What the correction desk's use cases return: plain JSON (dates as ISO strings), so a server
 * component's first paint and a client component's polling read the same shape. The route
 * contracts (lib/delivery/contracts/corrections.ts) parse responses with these schemas.
 */
import { z } from "zod";
import { ZIsoDate, ZJson, ZRunStatus, ZStepStanding, ZStepStatus, ZToolClass } from "@/packages/client/src/protocol/schemas/saga";
import { ZAudienceRank } from "@/lib/desks/dashboard/views";

/** Where a correction stands, as the desk names it (claimed is a draft someone holds). */
export const CorrectionState = {
  /** Pre-written, nobody holds it. */
  draft: "draft",
  /** A draft one person holds. */
  claimed: "claimed",
  /** Approved; its send is with the worker (or its outcome is not known yet). */
  sending: "sending",
  /** Sent: the message exists at the provider. */
  sent: "sent",
  /** Not sent, with the reason recorded. */
  dismissed: "dismissed",
} as const;
/** A correction's state on the desk. */
export type CorrectionState = (typeof CorrectionState)[keyof typeof CorrectionState];
export const ZCorrectionState = z.enum(CorrectionState);

/** Where the send stands, read from the send run's log. */
export const SendState = {
  /** Nothing was asked yet. */
  none: "none",
  /** Approved, waiting for a worker (no call made yet). */
  queued: "queued",
  /** A call was made and its outcome is not known (timeout): it is reconciled by its key, never resent blindly. */
  outcome_unknown: "outcome_unknown",
  /** The provider refused the message. */
  refused: "refused",
  /** Every message exists at the provider. */
  confirmed: "confirmed",
} as const;
/** Where a send stands. */
export type SendState = (typeof SendState)[keyof typeof SendState];
export const ZSendState = z.enum(SendState);

/** The queue's SLA badge. */
export const ZSla = z.object({
  /** When the correction should be handled by. */
  dueAt: ZIsoDate,
  /** ok, due_soon (under a quarter of the time left), overdue, or met (handled). */
  state: z.enum(["ok", "due_soon", "overdue", "met"]),
  /** The badge in words ("due in 3 h", "overdue by 20 min"). */
  label: z.string(),
});

/** One row of the correction queue. */
export const ZCorrectionQueueItem = z.object({
  /** `cor_...` */
  id: z.string(),
  /** Where it stands. */
  state: ZCorrectionState,
  /** Who the correction is for (customer, partner, finance, ...). */
  audience: z.array(z.string()),
  /** Blast radius: 0 internal, 1 partner, 2 customer. */
  rank: ZAudienceRank,
  /** The draft's subject as it stands now. */
  subject: z.string(),
  /** Addresses it goes to (set by support, else the original's). */
  recipients: z.array(z.string()),
  /** The run whose effect it answers. */
  run: z.object({ id: z.string(), title: z.string() }),
  /** The original step. */
  step: z.object({ id: z.string(), stepIdx: z.number().int(), tool: z.string() }),
  /** `unwind` or `revoke:<rvk_...>`. */
  draftedBy: z.string().nullable(),
  /** Who holds it. */
  claimedBy: z.string().nullable(),
  /** Their display name, when they are a dashboard user. */
  claimedByName: z.string().nullable(),
  /** Where the send stands. */
  send: ZSendState,
  createdAt: ZIsoDate,
  /** Seconds since it was drafted (until it was sent or dismissed). */
  ageSeconds: z.number().int(),
  sla: ZSla,
});
/** A queue row. */
export type TCorrectionQueueItem = z.infer<typeof ZCorrectionQueueItem>;

/** The queue: ranked by blast radius (internal first, customer last), oldest first within a rank. */
export const ZCorrectionQueue = z.object({
  items: z.array(ZCorrectionQueueItem),
  /** Pass as `cursor` for the next page; null on the last one. */
  nextCursor: z.string().nullable(),
  /** Counts per state over the whole table (the filter chips). */
  counts: z.record(ZCorrectionState, z.number().int()),
  /** Whether the signed-in person may claim, edit, send and dismiss. */
  canHandle: z.boolean(),
  /** The signed-in person's email. */
  me: z.string(),
});
/** The queue. */
export type TCorrectionQueue = z.infer<typeof ZCorrectionQueue>;

/** A step of the run the correction explains. */
export const ZRunStepLine = z.object({
  id: z.string(),
  stepIdx: z.number().int(),
  tool: z.string(),
  toolClass: ZToolClass,
  status: ZStepStatus,
  /** Where it stands for a person: its status, or REPAIRED_BY_HAND (packages/client/src/saga/step-standing.ts). */
  standing: ZStepStanding,
  externalRef: z.string().nullable(),
  /** Who saw it. */
  audience: z.array(z.string()),
  at: ZIsoDate,
});

/** One entry of a correction's history, in words, with the raw event one click away. */
export const ZHistoryEntry = z.object({
  /** Event type (`correction.edited`). */
  type: z.string(),
  /** Who (`user:rita@example.com`, `system:worker-1`). */
  actor: z.string(),
  at: ZIsoDate,
  /** The sentence a person reads. */
  text: z.string(),
  /** The event's data as recorded. */
  data: ZJson,
});
/** A history entry. */
export type THistoryEntry = z.infer<typeof ZHistoryEntry>;

/** One correction with everything its page shows. */
export const ZCorrectionDetail = ZCorrectionQueueItem.extend({
  /** Bumped on every change; edits and sends carry it back (`expectedVersion`). */
  version: z.number().int(),
  /** The draft's body as it stands now. */
  body: z.string(),
  /** The text as drafted (differs from subject/body once edited). */
  drafted: z.object({ subject: z.string(), body: z.string() }),
  editedBy: z.string().nullable(),
  editedAt: ZIsoDate.nullable(),
  claimedAt: ZIsoDate.nullable(),
  /** Who asked for the send, when it went out, the provider's message id, the step that sent it. */
  sentBy: z.string().nullable(),
  sentAt: ZIsoDate.nullable(),
  messageId: z.string().nullable(),
  sendStepId: z.string().nullable(),
  /** The run that sends it (one logged irreversible step per recipient), once asked. */
  sendRunId: z.string().nullable(),
  /** The send in words (queued, outcome unknown and reconciled by key, refused, sent). */
  sendText: z.string().nullable(),
  dismissedBy: z.string().nullable(),
  dismissedAt: ZIsoDate.nullable(),
  dismissReason: z.string().nullable(),
  /** The effect it answers. */
  original: z.object({
    tool: z.string(),
    toolClass: ZToolClass,
    status: ZStepStatus,
    at: ZIsoDate,
    /** Who it went to (an address), when the call names one. */
    recipients: z.array(z.string()),
    /** Who could see it. */
    audience: z.array(z.string()),
    /** Its subject and text, when it was a message. */
    subject: z.string().nullable(),
    text: z.string().nullable(),
    externalRef: z.string().nullable(),
    /** Whether anyone outside the company saw it, and the sentence that says so. */
    seen: z.boolean(),
    seenText: z.string(),
    args: ZJson,
  }),
  run: z.object({ id: z.string(), title: z.string(), status: ZRunStatus, agent: z.string(), onBehalfOf: z.string().nullable() }),
  /** The steps of that run, in order. */
  steps: z.array(ZRunStepLine),
  /** The revoke that drafted it, when a person pulled the effect back: who, with which role, when and why. */
  revoke: z
    .object({ id: z.string(), requestedBy: z.string(), requestedByName: z.string().nullable(), role: z.string(), reason: z.string(), requestedAt: ZIsoDate })
    .nullable(),
  /** Drafted, claimed, edited, send asked, sent or dismissed: oldest first. */
  history: z.array(ZHistoryEntry),
});
/** A correction's page. */
export type TCorrectionDetail = z.infer<typeof ZCorrectionDetail>;

/** What claiming or releasing answers: the correction, or who holds it / why not. */
export const ZCorrectionClaimResult = z.union([
  z.object({ ok: z.literal(true), correction: ZCorrectionQueueItem }),
  z.object({ ok: z.literal(false), reason: z.literal("held"), heldBy: z.string(), heldByName: z.string().nullable(), claimedAt: ZIsoDate.nullable() }),
  z.object({ ok: z.literal(false), reason: z.literal("closed"), state: ZCorrectionState }),
  z.object({ ok: z.literal(false), reason: z.literal("not_claimed") }),
]);
/** A claim or release outcome. */
export type TCorrectionClaimResult = z.infer<typeof ZCorrectionClaimResult>;

/** What a send answers. */
export const ZSendCorrectionResult = z.object({
  correction: ZCorrectionQueueItem,
  /** The run whose logged step sends it (derived from the correction). */
  sendRunId: z.string(),
  /** The worker task that sends it. */
  taskId: z.string(),
  /** True when this request found the send already approved (a double click, a second tab, a retry). */
  repeated: z.boolean(),
});
/** A send's answer. */
export type TSendCorrectionResult = z.infer<typeof ZSendCorrectionResult>;
