// Saving a reviewer's edit of one plan item: the request, bound to the plan hash the page loaded, and
// what the page says when the server records the edit or refuses it. The editor itself (the form) is
// PlanItemEditor in pivot-decision.tsx.

import { ZEditPlanItemResult, type TEditPlanItemResult } from "@/lib/desks/pivots/views";
import { dashboardUrl, DashboardPath } from "@/lib/delivery/dashboard-paths";
import { postParsed } from "@/components/dashboard/live";
import { HASH_PREFIX } from "./pivot-head";

/** An edit the server recorded: the edit, and the screen as it stands after it. */
type Recorded = Extract<TEditPlanItemResult, { ok: true }>;
/** An edit the server refused, and why. */
type Refused = Extract<TEditPlanItemResult, { ok: false }>;

/** Sends a reviewer's edit of call `idx`, bound to `planHash` (the plan the page loaded); a blank note is sent as none. */
export function postPlanItemEdit(pivotId: string, planHash: string, idx: number, args: unknown, note: string): Promise<TEditPlanItemResult> {
  return postParsed(dashboardUrl(DashboardPath.editPlanItem, { pivotId }), ZEditPlanItemResult, { planHash, itemIdx: idx, args, note: note.trim() || null });
}

/** Why the server did not record an edit, in a sentence the editor shows. */
export function editRefusal(outcome: Refused): string {
  if (outcome.reason === "argument_locked") return outcome.message ?? `You may not change ${outcome.arguments.join(", ")}.`;
  return outcome.reason === "unchanged"
    ? "Nothing changed: these are the arguments the plan already has."
    : outcome.reason === "already_decided"
      ? `${outcome.decidedBy ?? "Someone"} decided this pivot meanwhile; nothing was edited.`
      : outcome.reason === "run_not_waiting"
        ? "The run no longer waits for this pivot; nothing was edited."
        : "The plan changed since this page loaded; load the current plan and edit that.";
}

/** What the page says once call `idx` is edited: the new plan hash, and that approving now lets the edited call run. */
export function editRecorded(idx: number, edit: Recorded["edit"]): string {
  return `Call ${idx + 1} (${edit.tool}) now has your arguments; the plan hash is ${edit.planHashAfter.slice(0, HASH_PREFIX)}. Approve to let the agent make the edited call.`;
}
