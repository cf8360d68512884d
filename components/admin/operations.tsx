"use client";

// The operations page: whether Sagaboard itself is healthy (its workers, task queue, notifier, stuck
// runs and sweeps), in sentences and counts an admin reads at a glance; live like the other desks.

import Link from "@/components/link";
import { formatDuration, Time } from "@/components/saga-display";
import { BackLink, StackTable } from "@/components/section";
import { LiveMarker, useLive } from "@/components/dashboard/live";
import { DashboardPath } from "@/lib/delivery/dashboard-paths";
import { ZOperations, type TOperations } from "@/lib/desks/operations/views";

/** "4m 10s ago", measured on the database clock the figures were read with. */
function ago(at: string, now: string): string {
  const seconds = (new Date(now).getTime() - new Date(at).getTime()) / 1000;
  return seconds < 1 ? "just now" : `${formatDuration(seconds)} ago`;
}

/** A worker not seen for this long is probably gone. */
const QUIET_SECONDS = 5 * 60;

/** One figure with its label and what it means; `bad` marks what needs someone. */
function Figure({ label, value, note, bad = false, testId }: { label: string; value: number | string; note: string; bad?: boolean; testId?: string }) {
  return (
    <div className={bad ? "fact fact-bad" : "fact"} data-testid={testId}>
      <span className="fact-label">{label}</span>
      <span className="fact-value">{value}</span>
      <span className="muted small">{note}</span>
    </div>
  );
}

/** Workers, the task queue, the notifier, runs people must look at, and the sweeps: polled. */
export function OperationsLive({ initial }: { initial: TOperations }) {
  const { data, error } = useLive(["operations"], DashboardPath.getOperations, initial, ZOperations);
  const { now, workers, tasks, notifier, runs, sweeps } = data;
  const waitingFor = tasks.oldestWaitingSince ? (new Date(now).getTime() - new Date(tasks.oldestWaitingSince).getTime()) / 1000 : 0;
  return (
    <>
      <BackLink href="/">Runs</BackLink>
      <div className="page-head">
        <div>
          <h1>Operations</h1>
          <p className="muted">Whether Sagaboard itself is healthy: its workers, task queue, notifier and sweeps. What the agents did is on the overview.</p>
        </div>
        <LiveMarker error={error} />
      </div>

      <section className="section" aria-labelledby="ops-queue">
        <h2 id="ops-queue">Task queue</h2>
        <div className="facts">
          <Figure
            testId="ops-waiting"
            label="Waiting"
            value={tasks.waiting}
            bad={waitingFor > QUIET_SECONDS}
            note={tasks.oldestWaitingSince ? `oldest queued ${ago(tasks.oldestWaitingSince, now)}` : "nothing waits for a worker"}
          />
          <Figure label="Leased" value={tasks.leased} note="held by a worker under a live lease" />
          <Figure label="Lease ran out" value={tasks.leaseExpired} bad={tasks.leaseExpired > 0} note={tasks.leaseExpired > 0 ? "a worker stopped mid-task: claimable again" : "none"} />
          <Figure label="Failed (last hour)" value={tasks.failedLastHour} bad={tasks.failedLastHour > 0} note="given up: see the run's escalations" />
        </div>
      </section>

      <section className="section" aria-labelledby="ops-workers">
        <h2 id="ops-workers">
          Workers<span className="count">{workers.length}</span>
        </h2>
        {workers.length === 0 ? (
          <p className="empty-inline" data-testid="ops-no-workers">
            No worker has claimed a task in the last day. Unwinds, revokes and commits by a worker wait until one runs (<code>npm run worker</code>, or a team&apos;s own worker).
          </p>
        ) : (
          <StackTable headers={["Worker", "Last seen", "Tools", { label: "Holding", num: true }, { label: "Done (1 h)", num: true }, { label: "Failed (1 h)", num: true }]}>
            {workers.map((w) => {
              const quiet = (new Date(now).getTime() - new Date(w.lastSeen).getTime()) / 1000 > QUIET_SECONDS;
              return (
                <tr key={w.id} data-testid="ops-worker">
                  <td data-label="Worker">
                    <code>{w.id}</code>
                  </td>
                  <td data-label="Last seen" className={quiet ? "attention" : undefined}>
                    {ago(w.lastSeen, now)} <span className="muted small">(<Time at={w.lastSeen} />)</span>
                  </td>
                  <td data-label="Tools">{w.tools.length > 0 ? w.tools.join(", ") : <span className="muted">none named</span>}</td>
                  <td className="num" data-label="Holding">
                    {w.holding}
                  </td>
                  <td className="num" data-label="Done (1 h)">
                    {w.doneLastHour}
                  </td>
                  <td className={w.failedLastHour > 0 ? "num attention" : "num"} data-label="Failed (1 h)">
                    {w.failedLastHour}
                  </td>
                </tr>
              );
            })}
          </StackTable>
        )}
      </section>

      <section className="section" aria-labelledby="ops-notifier">
        <h2 id="ops-notifier">Notifier</h2>
        <div className="facts">
          <Figure label="Events to fan out" value={notifier.eventsPending} note="written with their audit events, not yet turned into deliveries" />
          <Figure label="Deliveries pending" value={notifier.deliveriesPending} note="due or being sent" />
          <Figure label="Deliveries failed" value={notifier.deliveriesFailed} bad={notifier.deliveriesFailed > 0} note="every attempt failed: replay them on the notifications page" />
        </div>
        {notifier.lastError ? (
          <p className="muted small" data-testid="ops-last-error">
            Newest error: {notifier.lastError.channel} to <code>{notifier.lastError.target}</code>: {notifier.lastError.error} (<Time at={notifier.lastError.at} /> UTC).{" "}
            <Link href="/admin/webhooks">Open the notifications page</Link>
          </p>
        ) : (
          <p className="muted small">No delivery has recorded an error.</p>
        )}
      </section>

      <section className="section" aria-labelledby="ops-runs">
        <h2 id="ops-runs">Runs and sweeps</h2>
        <div className="facts">
          <Figure label="Stuck after pivot" value={runs.stuck} bad={runs.stuck > 0} note="approved runs whose agent went quiet, raised for a person" />
          <Figure label="Waiting for people" value={runs.needsAttention} note="runs with items only people can settle" />
          <Figure label="Outcome unknown" value={runs.unknownSteps} bad={runs.unknownSteps > 0} note="steps nobody knows happened: reconcile or a person settles them" />
          <Figure label="SLA sweep" value={sweeps.lastSlaMark ? ago(sweeps.lastSlaMark, now) : "—"} note={sweeps.lastSlaMark ? "its newest reminder or breach mark" : "it has marked nothing yet"} />
          <Figure label="Stuck-run sweep" value={sweeps.lastStuckRaised ? ago(sweeps.lastStuckRaised, now) : "—"} note={sweeps.lastStuckRaised ? "the newest run it raised" : "it has raised nothing yet"} />
        </div>
        <p className="muted small">
          <Link href="/escalations?kind=STUCK_AFTER_PIVOT">Stuck runs in the queue</Link> · <Link href="/runs?needsAttention=1">Runs waiting for people</Link> · Read at <Time at={now} /> UTC.
        </p>
      </section>
    </>
  );
}
