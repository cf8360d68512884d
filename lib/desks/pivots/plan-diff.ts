/**
 * What changed between the plan a reviewer loaded and the plan as it is now: items are matched by
 * tool and exact arguments (argsHash); a matched item whose tool policy version moved is "policy
 * changed". Pure (no server imports), so the pivot screen runs it in the browser.
 */
import type { TPlanItemView } from "@/lib/desks/pivots/views";

/** One line of a plan diff. */
export interface PlanDiffLine {
  /** What happened to the item. */
  change: "unchanged" | "added" | "removed" | "policy_changed";
  /** The item (the current one, except for removed items). */
  item: TPlanItemView;
  /** For policy_changed: the version the loaded plan named. */
  loadedPolicyVersion?: number;
}

/** The diff of `loaded` (what the page showed) against `current`: removed items first (the old reads before the new), then the current plan in order. */
export function diffPlans(loaded: readonly TPlanItemView[], current: readonly TPlanItemView[]): PlanDiffLine[] {
  const unmatched = [...loaded];
  const lines: PlanDiffLine[] = [];
  for (const item of current) {
    const i = unmatched.findIndex((old) => old.tool === item.tool && old.argsHash === item.argsHash);
    const old = i >= 0 ? unmatched.splice(i, 1)[0] : undefined;
    if (!old) lines.push({ change: "added", item });
    else if (old.planPolicyVersion !== item.planPolicyVersion || item.policyChanged) {
      lines.push({ change: "policy_changed", item, loadedPolicyVersion: old.planPolicyVersion });
    } else lines.push({ change: "unchanged", item });
  }
  return [...unmatched.map((old): PlanDiffLine => ({ change: "removed", item: old })), ...lines];
}
