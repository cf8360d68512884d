/**
 * The confirm page of an approval email's link: what the pivot screen shows (the facts, every staged
 * step by system and audience, the plan with what cannot be taken back), read-only, and two plain
 * forms that POST the decision (they work without JavaScript). Nothing here decides by being opened.
 */
import Link from "@/components/link";
import { BackLink } from "@/components/section";
import { Time } from "@/components/saga-display";
import { REJECTION_CODE_LABELS } from "@/components/dashboard/labels";
import { ApprovalsSoFar } from "@/components/dashboard/pivot/decision-panel";
import { PivotFacts } from "@/components/dashboard/pivot/pivot-facts";
import { PlanTable } from "@/components/dashboard/pivot/plan-table";
import { StagedEffects } from "@/components/dashboard/pivot/staged-effects";
import type { ApprovalConfirmation } from "@/lib/desks/approvals/get-approval-confirmation";
import { PIVOT_REJECTION_CODES } from "@/lib/saga/vocabulary";

/** What a used link did, in words. */
function outcomeWords(outcome: string): string {
  if (outcome === "approved") return "You approved this pivot. The agent may now commit the plan, each call once.";
  if (outcome === "rejected") return "You rejected this pivot. The agent reads your reason and revises the plan or unwinds.";
  if (outcome === "first_approval") return "Your approval is recorded. The plan needs a second approval by another reviewer; nothing runs until then.";
  if (outcome.startsWith("refused:")) return "Your decision was not recorded: the pivot changed or was decided just before it arrived. Open the pivot to see where it stands.";
  return "This link was used.";
}

/** The confirm page for one approval link. */
export function ApprovalConfirm({ confirmation }: { confirmation: ApprovalConfirmation }) {
  if (confirmation.state === "refused") {
    const { refusal } = confirmation;
    return (
      <>
        <BackLink href="/">Runs</BackLink>
        <div className="page-head">
          <h1>{refusal.title}</h1>
        </div>
        <p className="banner bad" role="alert" data-testid="approval-confirm-refused">
          {refusal.message}
        </p>
        {refusal.pivotId && <Link href={`/pivots/${encodeURIComponent(refusal.pivotId)}`}>Open the pivot</Link>}
      </>
    );
  }
  if (confirmation.state === "done") {
    return (
      <>
        <BackLink href="/">Runs</BackLink>
        <div className="page-head">
          <h1>Decided from your email</h1>
        </div>
        <p className="banner info" role="status" data-testid="approval-confirm-done">
          {outcomeWords(confirmation.outcome)} (<Time at={confirmation.usedAt} /> UTC)
        </p>
        <Link href={`/pivots/${encodeURIComponent(confirmation.pivotId)}`}>Open the pivot</Link>
      </>
    );
  }
  const { screen, linkId, expiresAt } = confirmation;
  const irreversible = screen.plan.filter((i) => i.toolClass === "IRREVERSIBLE" || (i.toolClass !== "REVERSIBLE" && i.answeredBy === null));
  const action = `/api/approvals/${encodeURIComponent(linkId)}`;
  return (
    <>
      <BackLink href="/">Runs</BackLink>
      <div className="page-head">
        <div>
          <h1>Decide: {screen.run.title}</h1>
          <p className="muted">
            {screen.pivot.summary} · requested by {screen.run.agent}
            {screen.run.onBehalfOf ? ` for ${screen.run.onBehalfOf}` : ""}
          </p>
        </div>
      </div>
      <p className="muted small" data-testid="approval-confirm-link">
        You opened this from your approval email. The link is yours alone and works once, until <Time at={expiresAt} /> UTC, and only for the plan below. Nothing is
        decided until you press a button here. <Link href={`/pivots/${encodeURIComponent(screen.pivot.id)}`}>Open the full pivot screen instead</Link>.
      </p>
      <ApprovalsSoFar screen={screen} />
      <PivotFacts loaded={screen} live={screen} irreversible={irreversible} />
      <StagedEffects screen={screen} />
      <section className="plan-section section" aria-labelledby="plan">
        <h2 id="plan">
          What approving lets the agent do<span className="count">{screen.plan.length}</span>
        </h2>
        <p className="muted small section-note">Only these calls, with exactly these arguments and policy versions, may run after approval; each runs once.</p>
        <PlanTable plan={screen.plan} staged={screen.staged} onEdit={null} committed={null} />
      </section>
      <section className="section decide-panel" aria-labelledby="decide" data-testid="approval-confirm-forms">
        <h2 id="decide">Your decision</h2>
        <form method="post" action={action} className="reject-form">
          <input type="hidden" name="decision" value="approve" />
          <input type="hidden" name="planHash" value={screen.pivot.planHash} />
          {irreversible.length > 0 && (
            <label className="choice">
              <input type="checkbox" name="understood" required /> I understand that {irreversible.map((i) => i.tool).join(", ")} cannot be taken back once the agent makes{" "}
              {irreversible.length === 1 ? "it" : "them"}.
            </label>
          )}
          <button type="submit" className="button approve">
            Approve this plan
          </button>
        </form>
        <form method="post" action={action} className="reject-form">
          <input type="hidden" name="decision" value="reject" />
          <input type="hidden" name="planHash" value={screen.pivot.planHash} />
          <label htmlFor="reject-code">What should the agent do?</label>
          <select id="reject-code" name="reasonCode" defaultValue="REVISE_ARGUMENTS">
            {PIVOT_REJECTION_CODES.map((code) => (
              <option key={code} value={code}>
                {REJECTION_CODE_LABELS[code] ?? code}
              </option>
            ))}
          </select>
          <label htmlFor="reject-reason">Reason for the agent (required to reject)</label>
          <textarea id="reject-reason" name="reason" rows={3} required placeholder="e.g. Do not capture: the customer asked for store credit instead." />
          <button type="submit" className="button reject">
            Reject
          </button>
        </form>
      </section>
    </>
  );
}
