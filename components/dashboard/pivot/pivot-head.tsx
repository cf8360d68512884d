// The head of the pivot screen: which run, whose agent, on whose behalf, when it was asked, the plan
// hash a decision binds to, and the agent's own summary of what it proposes.

import { Mono, Time } from "@/components/saga-display";
import type { TPivotScreen } from "@/lib/desks/pivots/views";
import { DetailHead, Meta, MetaList } from "@/components/detail-head";

/** How many characters of a plan hash the screen shows (the whole hash is in the title). */
export const HASH_PREFIX = 12;

/**
 * The head of the pivot screen: the run and its status (live), what was loaded (when it was asked, the
 * plan hash a decision binds to), and the summary of the plan the page loaded.
 */
export function PivotHead({ pivotId, loaded, live, error }: { pivotId: string; loaded: TPivotScreen; live: TPivotScreen; error: unknown }) {
  return (
    <>
      <DetailHead back={{ href: `/runs/${encodeURIComponent(live.run.id)}`, label: `Run: ${live.run.title}` }} title={`Pivot of “${live.run.title}”`} status={live.pivot.status} error={error}>
        <MetaList>
          <Meta label="Agent">{live.run.agent}</Meta>
          <Meta label="On behalf of">{live.run.onBehalfOf ?? <span className="muted">—</span>}</Meta>
          <Meta label="Requested">
            <Time at={loaded.pivot.createdAt} />
          </Meta>
          <Meta label="Plan hash">
            <Mono text={loaded.pivot.planHash.slice(0, HASH_PREFIX)} title={loaded.pivot.planHash} />
          </Meta>
          <Meta label="Pivot">
            <Mono text={pivotId} />
          </Meta>
        </MetaList>
      </DetailHead>

      <blockquote className="pivot-summary">
        <span className="cell-label">The agent proposes</span>
        {loaded.pivot.summary}
      </blockquote>
    </>
  );
}
