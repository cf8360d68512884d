"use client";

// When the plan under the reviewer's eyes is no longer the current one: the old plan against the
// current one, after an approval refused because the plan (or a tool's policy) changed, or when
// polling sees a revision. Either way the page offers to load the current plan; it never swaps it.

import { useRouter } from "next/navigation";
import { ClassBadge, LabelledValues } from "@/components/saga-display";
import { diffPlans } from "@/lib/desks/pivots/plan-diff";
import type { TPivotDecisionResult, TPivotScreen, TPlanItemView } from "@/lib/desks/pivots/views";

/** Old plan against current plan, after a refused approval or a revision seen by polling. */
function PlanDiff({ loaded, current }: { loaded: TPlanItemView[]; current: TPlanItemView[] }) {
  const lines = diffPlans(loaded, current);
  return (
    <table className="diff">
      <thead>
        <tr>
          <th>Change</th>
          <th>Call</th>
          <th>Arguments</th>
          <th>Policy</th>
        </tr>
      </thead>
      <tbody>
        {lines.map((line, i) => (
          <tr key={i} className={`diff-${line.change}`}>
            <td className="nowrap">
              {line.change === "added" ? "+ added" : line.change === "removed" ? "− removed" : line.change === "policy_changed" ? "~ policy changed" : "unchanged"}
            </td>
            <td className="nowrap">
              <code>{line.item.tool}</code> <ClassBadge toolClass={line.item.toolClass} />
            </td>
            <td>
              <LabelledValues value={line.item.args} />
            </td>
            <td className="nowrap">
              {line.change === "policy_changed"
                ? `v${line.loadedPolicyVersion ?? line.item.planPolicyVersion} → v${line.item.currentPolicyVersion}`
                : `v${line.item.planPolicyVersion}`}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The approval was refused because the plan (or a tool's policy) changed since the page loaded: what changed, and a way to load the current plan. */
export function PlanChangedRefusal({ refusal, loaded }: { refusal: Extract<TPivotDecisionResult, { reason: "plan_changed" }>; loaded: TPivotScreen }) {
  const router = useRouter();
  return (
    <section className="banner bad" role="alert">
      <h2>Not approved: the plan changed since this page loaded</h2>
      <p>
        {refusal.policyChanges.length > 0
          ? `An admin changed the policy of ${refusal.policyChanges.map((c) => `${c.tool} (v${c.planVersion} → v${c.currentVersion})`).join(", ")} after the plan was made, so this approval would be stale.`
          : "The plan was revised (by the agent, or edited by another reviewer). Nothing was approved. Review what changed, then load the new plan and decide again."}
      </p>
      {refusal.current.summary !== loaded.pivot.summary && (
        <p>
          The agent now proposes: <em>{refusal.current.summary}</em>
        </p>
      )}
      <PlanDiff loaded={loaded.plan} current={refusal.current.plan} />
      <button type="button" className="button" onClick={() => router.refresh()}>
        Load the current plan
      </button>
    </section>
  );
}

/** Polling saw the plan revised after the page loaded: the plan shown stays the loaded one; what changed, and a way to load the new one. */
export function PlanRevisedNotice({ loaded, live }: { loaded: TPivotScreen; live: TPivotScreen }) {
  const router = useRouter();
  return (
    <section className="banner warn" role="status">
      <h2>This plan was revised after you opened it</h2>
      <p>The plan below is the one you loaded; approving it now would be refused. Review what changed:</p>
      {live.pivot.summary !== loaded.pivot.summary && (
        <p>
          The agent now proposes: <em>{live.pivot.summary}</em>
        </p>
      )}
      <PlanDiff loaded={loaded.plan} current={live.plan} />
      <button type="button" className="button" onClick={() => router.refresh()}>
        Load the new plan
      </button>
    </section>
  );
}
