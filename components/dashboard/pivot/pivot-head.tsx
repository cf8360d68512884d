// The head of the pivot screen: which run, whose agent, on whose behalf, when it was asked, the plan
// hash a decision binds to, and the agent's own summary of what it proposes.

import { Mono, StatusBadge, Time } from "@/components/saga-display";
import type { TPivotScreen } from "@/lib/desks/pivots/views";
import { LiveMarker } from "@/components/dashboard/live";
import { BackLink } from "@/components/section";

/** How many characters of a plan hash the screen shows (the whole hash is in the title). */
export const HASH_PREFIX = 12;

/**
 * The head of the pivot screen: the run and its status (live), what was loaded (when it was asked, the
 * plan hash a decision binds to), and the summary of the plan the page loaded.
 */
export function PivotHead({ pivotId, loaded, live, error }: { pivotId: string; loaded: TPivotScreen; live: TPivotScreen; error: unknown }) {
  return (
    <>
      <BackLink href={`/runs/${encodeURIComponent(live.run.id)}`}>Run: {live.run.title}</BackLink>
      <div className="page-head">
        <div>
          <div className="title-line">
            <h1>Pivot of “{live.run.title}”</h1>
            <StatusBadge status={live.pivot.status} />
            <LiveMarker error={error} />
          </div>
          <dl className="run-meta">
            <div>
              <dt>Agent</dt>
              <dd>{live.run.agent}</dd>
            </div>
            <div>
              <dt>On behalf of</dt>
              <dd>{live.run.onBehalfOf ?? <span className="muted">—</span>}</dd>
            </div>
            <div>
              <dt>Requested</dt>
              <dd>
                <Time at={loaded.pivot.createdAt} />
              </dd>
            </div>
            <div>
              <dt>Plan hash</dt>
              <dd>
                <Mono text={loaded.pivot.planHash.slice(0, HASH_PREFIX)} title={loaded.pivot.planHash} />
              </dd>
            </div>
            <div>
              <dt>Pivot</dt>
              <dd>
                <Mono text={pivotId} />
              </dd>
            </div>
          </dl>
        </div>
      </div>

      <blockquote className="pivot-summary">
        <span className="cell-label">The agent proposes</span>
        {loaded.pivot.summary}
      </blockquote>
    </>
  );
}
