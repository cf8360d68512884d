/**
 * The confirm page of an approval email's link: what the pivot screen shows (the facts, every staged
 * step by system and audience, the plan with what cannot be taken back), or the held call (what it
 * does and who sees it), read-only, and two plain forms that POST the decision (they work without
 * JavaScript). Nothing here decides by being opened.
 */
import Link from "@/components/link";
import { BackLink } from "@/components/section";
import { LabelledValues, Time } from "@/components/saga-display";
import { Audience } from "@/components/dashboard/pivot/blast-radius";
import { REJECTION_CODE_LABELS } from "@/components/dashboard/labels";
import { ApprovalsSoFar } from "@/components/dashboard/pivot/decision-panel";
import { PivotFacts } from "@/components/dashboard/pivot/pivot-facts";
import { PlanTable } from "@/components/dashboard/pivot/plan-table";
import { StagedEffects } from "@/components/dashboard/pivot/staged-effects";
import type { ApprovalConfirmation } from "@/lib/desks/approvals/get-approval-confirmation";
import { PIVOT_REJECTION_CODES } from "@/packages/client/src/saga/vocabulary";

/** What a used link did, in words. */
function outcomeWords(outcome: string, subject: "pivot" | "escalation"): string {
  if (subject === "escalation") {
    if (outcome === "approved") return "You approved this held call. It runs once, the next time the agent makes it.";
    if (outcome === "rejected") return "You rejected this held call. The agent is told your reason when it asks again.";
  }
  if (outcome === "approved") return "You approved this pivot. The agent may now commit the plan, each call once.";
  if (outcome === "rejected") return "You rejected this pivot. The agent reads your reason and revises the plan or unwinds.";
  if (outcome === "first_approval") return "Your approval is recorded. The plan needs a second approval by another reviewer; nothing runs until then.";
  if (outcome.startsWith("refused:")) return "Your decision was not recorded: the item changed, or was decided or taken by someone else, just before it arrived. Open it to see where it stands.";
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
        {refusal.itemPath && <Link href={refusal.itemPath}>Open it in Sagaboard</Link>}
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
          {outcomeWords(confirmation.outcome, confirmation.subject)} (<Time at={confirmation.usedAt} /> UTC)
        </p>
        {confirmation.itemPath && <Link href={confirmation.itemPath}>Open it in Sagaboard</Link>}
      </>
    );
  }
  if (confirmation.subject === "escalation") return <HeldCallConfirm confirmation={confirmation} />;
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
      <DecisionForms action={action} planHash={screen.pivot.planHash} approveLabel="Approve this plan" irreversible={irreversible.map((i) => i.tool)} />
    </>
  );
}

/** The decision forms: approve (with the acknowledgement of what cannot be taken back) and reject with a reason. */
function DecisionForms({ action, planHash, approveLabel, irreversible }: { action: string; planHash: string; approveLabel: string; irreversible: string[] }) {
  return (
    <section className="section decide-panel" aria-labelledby="decide" data-testid="approval-confirm-forms">
      <h2 id="decide">Your decision</h2>
      <form method="post" action={action} className="reject-form">
        <input type="hidden" name="decision" value="approve" />
        <input type="hidden" name="planHash" value={planHash} />
        {irreversible.length > 0 && (
          <label className="choice">
            <input type="checkbox" name="understood" required /> I understand that {irreversible.join(", ")} cannot be taken back once the agent makes{" "}
            {irreversible.length === 1 ? "it" : "them"}.
          </label>
        )}
        <button type="submit" className="button approve">
          {approveLabel}
        </button>
      </form>
      <form method="post" action={action} className="reject-form">
        <input type="hidden" name="decision" value="reject" />
        <input type="hidden" name="planHash" value={planHash} />
        <label htmlFor="reject-code">What should the agent do?</label>
        <select id="reject-code" name="reasonCode" defaultValue="OTHER">
          {PIVOT_REJECTION_CODES.map((code) => (
            <option key={code} value={code}>
              {REJECTION_CODE_LABELS[code] ?? code}
            </option>
          ))}
        </select>
        <label htmlFor="reject-reason">Reason for the agent (required to reject)</label>
        <textarea id="reject-reason" name="reason" rows={3} required placeholder="e.g. Do not send: the customer asked us not to email them." />
        <button type="submit" className="button reject">
          Reject
        </button>
      </form>
    </section>
  );
}

/** The confirm page of a held call's link: the call, who sees it, why it is held. */
function HeldCallConfirm({ confirmation }: { confirmation: Extract<ApprovalConfirmation, { state: "usable"; subject: "escalation" }> }) {
  const { escalation: detail, linkId, expiresAt, planHash } = confirmation;
  const held = detail.heldCall;
  return (
    <>
      <BackLink href="/escalations">Escalations</BackLink>
      <div className="page-head">
        <div>
          <h1>Decide a held call: {detail.run.title}</h1>
          <p className="muted">
            {detail.escalation.title} · requested by {detail.run.agent}
            {detail.run.onBehalfOf ? ` for ${detail.run.onBehalfOf}` : ""}
          </p>
        </div>
      </div>
      <p className="muted small" data-testid="approval-confirm-link">
        You opened this from your approval email. The link is yours alone and works once, until <Time at={expiresAt} /> UTC, and only for this call. Nothing is
        decided until you press a button here. <Link href={`/escalations/${encodeURIComponent(detail.escalation.id)}`}>Open the escalation instead</Link>.
      </p>
      {held ? (
        <section className="section" aria-labelledby="held">
          <h2 id="held">The call the agent wants to make</h2>
          <p>
            <code>{held.tool}</code> {held.toolClass ? <span className="muted small">({held.toolClass.toLowerCase()})</span> : null}
          </p>
          <LabelledValues value={held.args} />
          <p>
            Seen by: <Audience audience={held.audience} rank={null} source={held.audienceSource} />
          </p>
          {(held.message ?? held.reason) && <p className="muted small">Held because: {held.message ?? held.reason}</p>}
        </section>
      ) : (
        <LabelledValues value={detail.escalation.detail} />
      )}
      <DecisionForms
        action={`/api/approvals/${encodeURIComponent(linkId)}`}
        planHash={planHash}
        approveLabel="Let this call run once"
        irreversible={held && held.toolClass === "IRREVERSIBLE" ? [held.tool] : []}
      />
    </>
  );
}
