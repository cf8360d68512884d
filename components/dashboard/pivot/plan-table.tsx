"use client";

// The commit plan as the pivot screen shows it: each call with exactly its arguments, who sees it, how
// it is undone and under which policy version; for a reviewer, an Edit button per item; after the
// approval, how each call stands.

import { ClassBadge, LabelledValues, StatusBadge } from "@/components/saga-display";
import type { TPivotScreen, TPlanItemView, TStagedEffect } from "@/lib/desks/pivots/views";
import { systemLabel } from "@/components/dashboard/labels";
import { Audience } from "./blast-radius";

/** How one plan item stands after the approval: the step that carries it, or not begun. */
function CommitCell({ step }: { step: TPivotScreen["committed"][number] | undefined }) {
  if (!step) return <span className="muted small">not run yet</span>;
  return (
    <span className="small">
      ran: <StatusBadge status={step.status} /> <span className="muted">step {step.stepIdx}</span>
    </span>
  );
}

/**
 * The arguments of the staged effect a plan item refers to by its external id (a capture naming the
 * authorisation's payment intent), so an amount in the item reads in that effect's currency.
 */
function referredArgs(item: TPlanItemView, staged: TStagedEffect[]): unknown {
  if (item.args === null || typeof item.args !== "object" || Array.isArray(item.args)) return undefined;
  const refs = new Set(Object.values(item.args).filter((v): v is string => typeof v === "string"));
  return staged.find((e) => e.externalRef !== null && refs.has(e.externalRef))?.args;
}

/** The commit plan: what approving lets the agent do (and, for a reviewer, an Edit button per item). */
export function PlanTable({ plan, staged, onEdit, committed }: { plan: TPlanItemView[]; staged: TStagedEffect[]; onEdit: ((idx: number) => void) | null; committed: TPivotScreen["committed"] | null }) {
  return (
    <div className="table-wrap wide-json">
      <table className="stack-on-phone">
        <thead>
          <tr>
            <th className="num">#</th>
            <th>Call</th>
            <th>System</th>
            <th>Arguments (exactly these)</th>
            <th>Who sees it</th>
            <th>If it must be undone</th>
            <th>Policy version</th>
            {onEdit && <th aria-label="Edit" />}
          </tr>
        </thead>
        <tbody>
          {plan.map((item) => (
            <tr key={item.idx} className={item.toolClass === "IRREVERSIBLE" ? "row-irreversible" : undefined} data-testid={`plan-item-${item.idx}`}>
              <td className="num" data-label="#">{item.idx + 1}</td>
              <td className="nowrap" data-label="Call">
                <div className="cell-stack">
                  <code>{item.tool}</code>
                  <ClassBadge toolClass={item.toolClass} />
                  {committed && <CommitCell step={committed.find((c) => c.idx === item.idx)} />}
                </div>
              </td>
              <td data-label="System">{systemLabel(item.system)}</td>
              <td data-label="Arguments">
                <LabelledValues value={item.args} currencyOf={referredArgs(item, staged)} />
              </td>
              <td data-label="Who sees it">
                <Audience audience={item.audience} rank={item.audienceRank} source={item.audienceSource} />
              </td>
              <td data-label="If undone">
                {item.toolClass === "IRREVERSIBLE" ? (
                  <span className="irreversible-text">No undo: only a correction message, sent by a person</span>
                ) : item.answeredBy ? (
                  <code>{item.answeredBy}</code>
                ) : (
                  <span className="muted">—</span>
                )}
              </td>
              <td className="nowrap" data-label="Policy">
                {item.policyChanged ? (
                  <span className="policy-changed" title="An admin changed this tool's policy after the plan was made; approval will be refused.">
                    v{item.planPolicyVersion} → now v{item.currentPolicyVersion}
                  </span>
                ) : (
                  <span title="The plan names the tool's current policy version.">v{item.planPolicyVersion} (current)</span>
                )}
              </td>
              {onEdit && (
                <td data-label="Edit">
                  {item.editable ? (
                    <button type="button" className="button small" onClick={() => onEdit(item.idx)} aria-label={`Edit the arguments of call ${item.idx + 1} (${item.tool})`}>
                      Edit
                    </button>
                  ) : (
                    <span className="muted small">not editable here</span>
                  )}
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
