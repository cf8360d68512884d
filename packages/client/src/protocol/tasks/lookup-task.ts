/**
 * A LOOKUP task: "check the real system" asked by a person, run where the tool's connector is.
 *
 * In a real deployment the tools' credentials live with the workers, not the web server, so the
 * dashboard cannot look a key up itself: it enqueues a LOOKUP for the step's tool, a worker that
 * holds the connector claims it, runs the tool's own lookup (with the search-lag recheck) and
 * completes the task with what it found. Nothing in the saga log changes; settling the step with
 * the answer as evidence is the person's separate, audited decision.
 */
import { z } from "zod";
import { ZReconcileBody } from "../schemas/calls";

/** Who asked, and about what: recorded with the task, shown with the answer. */
export const ZLookupPayload = z.object({
  /** The escalation the person was working (`esc_...`). */
  escalationId: z.string().trim().min(1),
  /** The person who asked (`user:<email>`). */
  askedBy: z.string().trim().min(1).max(200),
});
export type TLookupPayload = z.infer<typeof ZLookupPayload>;

/** What a worker completes a LOOKUP with: the step, and the lookup's answer in the reconcile body's shape. */
export const ZLookupResult = z.object({
  /** The step whose key was looked up. */
  stepId: z.string().min(1),
  /** Found (with what), absent after the recheck, or the lookup failing (with why). */
  lookup: ZReconcileBody,
});
export type TLookupResult = z.infer<typeof ZLookupResult>;
/** What a worker writes (before the schema fills its defaults). */
export type TLookupResultInput = z.input<typeof ZLookupResult>;
