// What is staged so far, as the pivot screen shows it: the blast radius counted per audience, then
// every staged effect grouped by its external system, with what releases it and until when.

import { ClassBadge, Countdown, formatDuration, LabelledValues, Mono, StatusBadge, Time } from "@/components/saga-display";
import type { TPivotScreen, TStagedEffect } from "@/lib/desks/pivots/views";
import { systemLabel } from "@/components/dashboard/labels";
import { Audience, RadiusBadge } from "./blast-radius";

/** Everything staged so far, grouped by external system. */
function StagedTable({ screen }: { screen: TPivotScreen }) {
  const byId = new Map(screen.staged.map((e) => [e.stepId, e]));
  const row = (e: TStagedEffect) => (
    <tr key={e.stepId} className={e.settled ? "row-settled" : undefined}>
      <td className="num" data-label="Step">{e.stepIdx}</td>
      <td className="nowrap" data-label="Call">
        <div className="cell-stack">
          <code>{e.tool}</code>
          <ClassBadge toolClass={e.toolClass} />
        </div>
      </td>
      <td data-label="Status">
        <StatusBadge status={e.status} />
      </td>
      <td data-label="External ref">
        <div className="cell-stack">
          <Mono text={e.externalRef} />
          <span className="cell-label" title={e.stepKey}>
            key {e.stepKey.slice(0, 8)}…
          </span>
        </div>
      </td>
      <td data-label="Arguments">
        <LabelledValues value={e.args} />
      </td>
      <td data-label="Who sees it">
        <Audience audience={e.audience} rank={e.audienceRank} />
      </td>
      <td data-label="To release it">
        {e.release ? (
          <div className="cell-stack">
            <span>
              Sagaboard calls <code>{e.release.tool}</code>
            </span>
            {e.release.args !== null && typeof e.release.args === "object" && Object.keys(e.release.args).length > 0 && <LabelledValues value={e.release.args} currencyOf={e.args} />}
            {e.compensationState !== "NONE" && <StatusBadge status={e.compensationState} />}
          </div>
        ) : (
          <span className="irreversible-text">nothing can release it</span>
        )}
      </td>
      <td className="nowrap" data-label="Releasable until">
        {e.settled ? (
          <span className="muted">nothing left to release</span>
        ) : (
          <div className="cell-stack">
            <Time at={e.releasableUntil} />
            {e.releasableUntil !== null && new Date(e.releasableUntil) <= new Date(screen.now) ? (
              <span className="irreversible-text" data-testid="staged-expired">
                expired <Countdown until={e.releasableUntil} now={screen.now} />: can no longer be released
              </span>
            ) : (
              <Countdown until={e.releasableUntil} now={screen.now} />
            )}
            <span className="cell-label">
              {e.revocationWindowSec === null
                ? "no revocation window"
                : `${formatDuration(e.revocationWindowSec)} window${e.windowSource === "registry_default" ? " (class default)" : ""}`}
              {screen.pivot.deadline && e.releasableUntil === screen.pivot.deadline ? ", capped by the deadline" : ""}
            </span>
          </div>
        )}
      </td>
    </tr>
  );
  return (
    <div className="table-wrap">
      <table className="stack-on-phone">
        <thead>
          <tr>
            <th className="num">Step</th>
            <th>Call</th>
            <th>Status</th>
            <th>External ref</th>
            <th>Arguments</th>
            <th>Who sees it</th>
            <th>To release it</th>
            <th>Releasable until (UTC)</th>
          </tr>
        </thead>
        {screen.bySystem.map((group) => (
          <tbody key={group.system}>
            <tr className="group-row">
              <th colSpan={8} scope="rowgroup">
                {systemLabel(group.system)} <span className="muted">· {group.stepIds.length} {group.stepIds.length === 1 ? "effect" : "effects"}</span>
              </th>
            </tr>
            {group.stepIds.map((id) => {
              const effect = byId.get(id);
              return effect ? row(effect) : null;
            })}
          </tbody>
        ))}
      </table>
    </div>
  );
}

/** The section of what is staged so far: how far it reaches (blast radius, systems), then the table. */
export function StagedEffects({ screen }: { screen: TPivotScreen }) {
  return (
    <section className="section" aria-labelledby="staged">
      <h2 id="staged">
        What is staged so far<span className="count">{screen.staged.length}</span>
      </h2>
      {screen.staged.length === 0 ? (
        <p className="empty-inline">Nothing was staged before this pivot.</p>
      ) : (
        <>
          <div className="radius-summary" aria-label="Blast radius">
            <span className="cell-label">Blast radius</span>
            {screen.byAudience.map((group) => (
              <span key={group.rank} className="radius-group">
                <RadiusBadge rank={group.rank} /> {group.stepIds.length} {group.stepIds.length === 1 ? "effect" : "effects"}
                <span className="muted small"> ({group.audience.map((a) => (a === "unknown" ? "audience unknown, counted as customer-facing" : a)).join(", ")})</span>
              </span>
            ))}
            <span className="muted small">
              across {screen.bySystem.length} {screen.bySystem.length === 1 ? "system" : "systems"}
            </span>
          </div>
          <StagedTable screen={screen} />
        </>
      )}
    </section>
  );
}
