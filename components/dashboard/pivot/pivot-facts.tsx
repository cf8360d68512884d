// The pivot screen's facts at a glance: how many calls the plan holds and which cannot be taken back,
// the deadline (or, once decided, the decision and how far the commit got), what is staged and still
// releasable, how much of it a customer sees, and whether a tool's policy changed since the plan.

import { runStatusInWords } from "@/lib/desks/dashboard/run-status-words";
import { Countdown, Time } from "@/components/saga-display";
import type { TPivotScreen, TPlanItemView } from "@/lib/desks/pivots/views";

/**
 * The facts a decision turns on, in one row: the loaded plan's calls (and `irreversible`, those nobody can
 * take back), the deadline or how the decision went, the staged effects, the customer-facing count and
 * the tool policies; statuses and counts come from the live screen.
 */
export function PivotFacts({ loaded, live, irreversible }: { loaded: TPivotScreen; live: TPivotScreen; irreversible: TPlanItemView[] }) {
  const pending = live.pivot.status === "PENDING";
  const approved = live.pivot.status === "APPROVED";
  const ran = live.committed.filter((c) => c.status === "CONFIRMED").length;
  const customerItems = loaded.plan.filter((i) => i.audienceRank === 2);
  const unknownAudience = loaded.plan.filter((i) => i.audienceSource === "unknown").length;
  const customerStaged = live.staged.filter((e) => e.audienceRank === 2).length;
  const openStaged = live.staged.filter((e) => !e.settled);
  // Staged effects still releasable now: a closed window cannot release anything.
  const releasable = openStaged.length - live.expiredStaged;
  return (
    <div className="facts">
      <div className="fact">
        <span className="fact-label">Commit plan</span>
        <span className="fact-value">
          {loaded.plan.length} {loaded.plan.length === 1 ? "call" : "calls"}
        </span>
        {irreversible.length > 0 ? (
          <span className="irreversible-text">
            {irreversible.length} cannot be taken back: {irreversible.map((i) => i.tool).join(", ")}
          </span>
        ) : (
          <span className="muted small">each can be undone</span>
        )}
      </div>
      {approved ? (
        <div className="fact" data-testid="commit-progress">
          <span className="fact-label">Commit</span>
          <span className="fact-value">
            {ran} of {loaded.plan.length} ran
          </span>
          <span className="muted small">{live.run.status === "COMPLETED" ? "the run is complete" : ran < loaded.plan.length ? "the agent commits the plan item by item" : `the run is ${runStatusInWords(live.run.status)}`}</span>
        </div>
      ) : !pending ? (
        <div className="fact">
          <span className="fact-label">Decision</span>
          <span className="fact-value">rejected</span>
          <span className="muted small">no call of the plan may run</span>
        </div>
      ) : (
        <div className="fact" data-testid="decide-by">
          <span className="fact-label">Deadline</span>
          {live.decideBy.at ? (
            <>
              <span className="fact-value">
                <Countdown until={live.decideBy.at} now={live.now} />
              </span>
              <span className="muted small">
                {live.decideBy.rejectsAutomatically ? "rejected then if nobody decides" : "the agent asked for a decision by then"}, <Time at={live.decideBy.at} /> UTC
                {live.decideBy.rejectsAutomatically && live.decideBy.agentDeadline && live.decideBy.agentDeadline !== live.decideBy.at && (
                  <>
                    {" "}
                    (the agent asked by <Time at={live.decideBy.agentDeadline} />; the SLA comes first)
                  </>
                )}
              </span>
            </>
          ) : (
            <span className="fact-value muted">none</span>
          )}
        </div>
      )}
      <div className="fact">
        <span className="fact-label">Staged, releasable</span>
        <span className="fact-value">
          {releasable} of {live.staged.length}
        </span>
        {live.expiredStaged > 0 && (
          <span className="irreversible-text small" data-testid="expired-staged">
            {live.expiredStaged} expired: {live.expiredStaged === 1 ? "its window closed; it" : "their windows closed; they"} can no longer be released
          </span>
        )}
        {!pending ? (
          <span className="muted small">
            {approved
              ? "kept: the plan was approved"
              : releasable > 0
                ? "still staged: released only if the agent unwinds the run (or a person pulls it back)"
                : "nothing staged is left to release"}
          </span>
        ) : releasable === 0 ? null : live.releasableUntil ? (
          <span className="muted small">
            first expires <Countdown until={live.releasableUntil} now={live.now} />
          </span>
        ) : (
          <span className="muted small">no expiry known</span>
        )}
      </div>
      <div className="fact" data-testid="customer-facing">
        <span className="fact-label">Customer-facing</span>
        <span className="fact-value">{customerItems.length + customerStaged}</span>
        <span className="muted small">
          {customerItems.length} in the plan{unknownAudience > 0 ? ` (${unknownAudience} with an unknown audience, counted as customer-facing)` : ""}, {customerStaged} staged
        </span>
      </div>
      <div className={loaded.policyChanged || live.policyChanged ? "fact fact-bad" : "fact"}>
        <span className="fact-label">Tool policies</span>
        <span className="fact-value">{loaded.policyChanged || live.policyChanged ? "changed" : "current"}</span>
        <span className="muted small">{loaded.policyChanged || live.policyChanged ? "an admin edited a tool since the plan was made" : "as when the plan was made"}</span>
      </div>
    </div>
  );
}
