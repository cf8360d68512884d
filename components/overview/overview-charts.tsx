"use client";

import Link from "next/link";
import type { ReactNode } from "react";
import { Bar, BarChart, CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import type { Overview, OverviewBucket, WaitingKind } from "@/lib/desks/overview/get-overview";
import styles from "./overview.module.css";
import { BackLink } from "@/components/section";

const RANGES = [
  ["24h", "Last 24 hours"],
  ["7d", "7 days"],
  ["30d", "30 days"],
  ["90d", "90 days"],
] as const;

const KIND_LABELS: Record<WaitingKind, string> = {
  PIVOT: "Pivots waiting for a reviewer",
  APPROVAL_REQUIRED: "Held calls to approve",
  COMPENSATION_FAILED: "Failed compensations to repair",
  OUTCOME_UNKNOWN: "Unknown outcomes to settle",
  STUCK_AFTER_PIVOT: "Steps stuck after the pivot",
  REVOKE_OUT_OF_WINDOW: "Revokes past their window",
  CORRECTION: "Corrections for support",
};

const KIND_LINKS: Record<WaitingKind, string> = {
  PIVOT: "/?status=AWAITING_PIVOT",
  APPROVAL_REQUIRED: "/escalations?kind=APPROVAL_REQUIRED",
  COMPENSATION_FAILED: "/escalations?kind=COMPENSATION_FAILED",
  OUTCOME_UNKNOWN: "/escalations?kind=OUTCOME_UNKNOWN",
  STUCK_AFTER_PIVOT: "/escalations?kind=STUCK_AFTER_PIVOT",
  REVOKE_OUT_OF_WINDOW: "/escalations?kind=REVOKE_OUT_OF_WINDOW",
  CORRECTION: "/corrections",
};

const OUTCOME_LABELS: Record<string, string> = {
  requested: "Compensation under way",
  confirmed: "Compensated (read back)",
  failed: "Compensation failed",
  out_of_window: "Past the window (escalated)",
  correction_drafted: "Correction waiting",
  correction_sent: "Correction sent",
  correction_dismissed: "Correction dismissed",
};

const COLORS = { primary: "#2f5fa7", good: "#1d6b38", warn: "#c98a00", bad: "#a12b22", muted: "#9aa5b1" };

/** Seconds in words: 45 s, 12 min, 3.5 h, 2.1 days. */
export function durationWords(sec: number | null): string {
  if (sec === null) return "–";
  if (sec < 90) return `${sec} s`;
  if (sec < 5400) return `${Math.round(sec / 60)} min`;
  if (sec < 172800) return `${Math.round(sec / 360) / 10} h`;
  return `${Math.round(sec / 8640) / 10} days`;
}

function ago(iso: string | null): string {
  if (!iso) return "–";
  return durationWords(Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000)));
}

function tick(bucket: Overview["bucket"]) {
  return (iso: string) => {
    const d = new Date(iso);
    return bucket === "hour" ? `${String(d.getUTCHours()).padStart(2, "0")}:00` : `${d.getUTCDate()} ${d.toLocaleString("en", { month: "short", timeZone: "UTC" })}`;
  };
}

function Card({ title, lead, children, numbers, empty }: { title: string; lead: ReactNode; children: ReactNode; numbers: ReactNode; empty?: string | null }) {
  return (
    <section className={styles.chartCard} aria-label={title}>
      <h3>{title}</h3>
      <p className="muted small">{lead}</p>
      {empty ? <p className={styles.noChart}>{empty}</p> : <div className={styles.chart}>{children}</div>}
      <details className={styles.details}>
        <summary>The numbers</summary>
        {numbers}
      </details>
    </section>
  );
}

function SeriesTable({ overview, columns }: { overview: Overview; columns: [keyof OverviewBucket, string, ((v: number | null) => string)?][] }) {
  const rows = overview.buckets.filter((b) => columns.some(([key]) => (b[key] as number | null) !== 0 && b[key] !== null));
  const label = tick(overview.bucket);
  if (rows.length === 0) return <p className="muted">Nothing in this range.</p>;
  return (
    <table className={styles.numbers}>
      <thead>
        <tr>
          <th>{overview.bucket === "hour" ? "Hour (UTC)" : "Day (UTC)"}</th>
          {columns.map(([key, name]) => (
            <th key={key}>{name}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((b) => (
          <tr key={b.start}>
            <td>{label(b.start)}</td>
            {columns.map(([key, , format]) => (
              <td key={key}>{format ? format(b[key] as number | null) : String(b[key])}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The shared axes of the charts over the range's buckets. */
function bucketAxes(overview: Overview) {
  const label = tick(overview.bucket);
  const axis = { tick: { fontSize: 11 }, stroke: COLORS.muted };
  return {
    label,
    axis,
    grid: <CartesianGrid strokeDasharray="3 3" stroke="#e5e9ee" vertical={false} />,
    xAxis: <XAxis dataKey="start" tickFormatter={label} {...axis} minTickGap={16} />,
  };
}

/** Bars per bucket of the range, one series per entry of `bars` (`[field, name, colour]`). */
function BucketBars({ overview, bars }: { overview: Overview; bars: [keyof OverviewBucket, string, string][] }) {
  const { label, axis, grid, xAxis } = bucketAxes(overview);
  return (
    <ResponsiveContainer>
      <BarChart data={overview.buckets}>
        {grid}
        {xAxis}
        <YAxis allowDecimals={false} width={36} {...axis} />
        <Tooltip labelFormatter={(v) => label(String(v))} />
        {bars.length > 1 && <Legend wrapperStyle={{ fontSize: 12 }} />}
        {bars.map(([key, name, fill]) => (
          <Bar key={key} dataKey={key} name={name} fill={fill} />
        ))}
      </BarChart>
    </ResponsiveContainer>
  );
}

/** Horizontal bars of counts by category (`rows`: label and count), and the same as a table. */
function CategoryBars({ rows, name, labelWidth }: { rows: { label: string; count: number }[]; name: string; labelWidth: number }) {
  const axis = { tick: { fontSize: 11 }, stroke: COLORS.muted };
  return (
    <ResponsiveContainer>
      <BarChart data={rows} layout="vertical" margin={{ left: 8 }}>
        <CartesianGrid strokeDasharray="3 3" stroke="#e5e9ee" horizontal={false} />
        <XAxis type="number" allowDecimals={false} {...axis} />
        <YAxis type="category" dataKey="label" width={labelWidth} {...axis} />
        <Tooltip />
        <Bar dataKey="count" name={name} fill={COLORS.primary} />
      </BarChart>
    </ResponsiveContainer>
  );
}

/** Counts by category as a table (a chart's numbers). */
function CountTable({ rows }: { rows: { label: string; count: number }[] }) {
  return (
    <table className={styles.numbers}>
      <tbody>
        {rows.map((r) => (
          <tr key={r.label}>
            <td>{r.label}</td>
            <td>{r.count}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The overview: what waits for people, and the run-quality figures of the chosen range as charts. */
export function OverviewCharts({ overview, notice }: { overview: Overview; notice: string | null }) {
  const t = overview.totals;
  const { label, axis, grid, xAxis } = bucketAxes(overview);
  const waitingTotal = overview.waiting.reduce((s, w) => s + w.total, 0);
  const empty = t.runsIncomplete === 0 && t.compensationsRequested === 0 && t.repairsResolved === 0 && overview.correctionsByAudience.length === 0 && overview.revokesByOutcome.every((r) => r.count === 0);
  const repairData = overview.buckets.map((b) => ({ ...b, medianMin: b.repairMedianSec === null ? null : Math.round(b.repairMedianSec / 60), p90Min: b.repairP90Sec === null ? null : Math.round(b.repairP90Sec / 60) }));
  const revokes = overview.revokesByOutcome.map((r) => ({ ...r, label: OUTCOME_LABELS[r.outcome] ?? r.outcome }));
  const corrections = overview.correctionsByAudience.map((c) => ({ label: c.audience, count: c.sent }));
  const revokeTotal = revokes.reduce((s, r) => s + r.count, 0);

  return (
    <div>
      <BackLink href="/">Runs</BackLink>
      <div className="page-head">
        <div>
          <h1>Overview</h1>
          <p className="muted">
            What waits for people now, and how the agents&apos; runs went from {new Date(overview.from).toUTCString().slice(5, 22)} to {new Date(overview.to).toUTCString().slice(5, 22)} UTC.
          </p>
        </div>
        <nav className={styles.ranges} aria-label="Time range">
          {RANGES.map(([value, text]) => (
            <Link key={value} href={`/overview?range=${value}`} className={styles.range} aria-current={overview.range === value ? "page" : undefined}>
              {text}
            </Link>
          ))}
        </nav>
      </div>
      {notice && <p className="notice">{notice}</p>}

      <section className="section" aria-labelledby="waiting-head">
        <h2 id="waiting-head">
          Waiting for people <span className="count">{waitingTotal}</span>
        </h2>
        {waitingTotal === 0 ? (
          <p className="empty-inline">Nothing waits for a person right now.</p>
        ) : (
          <table className={styles.waitTable}>
            <thead>
              <tr>
                <th>What</th>
                <th className={styles.band}>under 1 h</th>
                <th className={styles.band}>1–4 h</th>
                <th className={styles.band}>4–24 h</th>
                <th className={styles.band}>over 24 h</th>
                <th>Total</th>
                <th>Oldest waited</th>
              </tr>
            </thead>
            <tbody>
              {overview.waiting
                .filter((w) => w.total > 0)
                .map((w) => (
                  <tr key={w.kind}>
                    <td>
                      <Link href={KIND_LINKS[w.kind]}>{KIND_LABELS[w.kind]}</Link>
                      <span className={styles.bandsInline}>
                        {(
                          [
                            ["under1h", "under 1 h"],
                            ["h1to4", "1–4 h"],
                            ["h4to24", "4–24 h"],
                            ["over24h", "over 24 h"],
                          ] as const
                        )
                          .filter(([key]) => w.ages[key] > 0)
                          .map(([key, text]) => `${w.ages[key]} ${text}`)
                          .join(" · ")}
                      </span>
                    </td>
                    <td className={styles.band}>{w.ages.under1h}</td>
                    <td className={styles.band}>{w.ages.h1to4}</td>
                    <td className={styles.band}>{w.ages.h4to24}</td>
                    <td className={`${styles.band} ${w.ages.over24h > 0 ? styles.old : ""}`}>{w.ages.over24h}</td>
                    <td>{w.total}</td>
                    <td className={w.ages.over24h > 0 ? styles.old : undefined}>{ago(w.oldestAt)}</td>
                  </tr>
                ))}
            </tbody>
          </table>
        )}
      </section>

      <section className="section" aria-labelledby="quality-head">
        <h2 id="quality-head">Run quality</h2>
        {empty && (
          <div className="empty">
            <strong>Nothing in this range for these figures.</strong>
            No unfinished run, compensation, repair, correction or revoke: pick a longer range above, or start an agent and its runs show here as they happen.
          </div>
        )}
        <div className={styles.grid}>
          <Card
            title="Irreversible steps executed before the pivot"
            lead={
              <>
                <span className={`${styles.headline} ${t.irreversibleBeforePivot === 0 ? styles.good : styles.bad}`}>{t.irreversibleBeforePivot}</span>
                {t.irreversibleBeforePivot === 0 ? "As it must be: nothing irreversible ran before a person approved it." : "Should be 0: an irreversible call ran before its pivot. Open the runs of these days."}
              </>
            }
            numbers={<SeriesTable overview={overview} columns={[["irreversibleBeforePivot", "Executed before the pivot"]]} />}
          >
            <BucketBars overview={overview} bars={[["irreversibleBeforePivot", "Irreversible before the pivot", COLORS.bad]]} />
          </Card>

          <Card
            title="Duplicate calls prevented by reconcile"
            lead={
              <>
                <span className={styles.headline}>{t.duplicatesPrevented}</span>
                retries that found the effect already there by its key, so the tool was not called twice.
              </>
            }
            numbers={<SeriesTable overview={overview} columns={[["duplicatesPrevented", "Prevented"]]} />}
          >
            <BucketBars overview={overview} bars={[["duplicatesPrevented", "Duplicates prevented", COLORS.good]]} />
          </Card>

          <Card
            title="Compensations requested vs confirmed"
            lead={
              <>
                <span className={styles.headline}>
                  {t.compensationsConfirmed} / {t.compensationsRequested}
                </span>
                confirmed by reading the real system back{t.compensationsFailed > 0 ? `; ${t.compensationsFailed} failed and went to the queue` : ""}.
              </>
            }
            numbers={
              <SeriesTable
                overview={overview}
                columns={[
                  ["compensationsRequested", "Requested"],
                  ["compensationsConfirmed", "Confirmed"],
                  ["compensationsFailed", "Failed"],
                ]}
              />
            }
          >
            <BucketBars overview={overview} bars={[["compensationsRequested", "Requested", COLORS.muted], ["compensationsConfirmed", "Confirmed", COLORS.good], ["compensationsFailed", "Failed", COLORS.bad]]} />
          </Card>

          <Card
            title="Incomplete runs"
            lead={
              <>
                <span className={styles.headline}>{t.runsIncomplete}</span>
                runs started in the range have not finished: still running, waiting, unwinding or needing attention.
              </>
            }
            numbers={
              <SeriesTable
                overview={overview}
                columns={[["runsIncomplete", "Incomplete"]]}
              />
            }
          >
            <BucketBars overview={overview} bars={[["runsIncomplete", "Incomplete", COLORS.warn]]} />
          </Card>

          <Card
            title="Manual repair time"
            lead={
              <>
                <span className={styles.headline}>{durationWords(t.repairMedianSec)}</span>
                median, {durationWords(t.repairP90Sec)} at the 90th percentile, over {t.repairsResolved} repairs (failed compensations, unknown outcomes, stuck steps, late revokes) resolved by people.
              </>
            }
            numbers={
              <SeriesTable
                overview={overview}
                columns={[
                  ["repairsResolved", "Resolved"],
                  ["repairMedianSec", "Median", durationWords],
                  ["repairP90Sec", "90th percentile", durationWords],
                ]}
              />
            }
          >
            <ResponsiveContainer>
              <LineChart data={repairData}>
                {grid}
                {xAxis}
                <YAxis width={44} {...axis} unit=" min" />
                <Tooltip labelFormatter={(v) => label(String(v))} formatter={(v) => `${String(v)} min`} />
                <Legend wrapperStyle={{ fontSize: 12 }} />
                <Line dataKey="medianMin" name="Median" stroke={COLORS.primary} connectNulls dot={{ r: 2 }} />
                <Line dataKey="p90Min" name="90th percentile" stroke={COLORS.warn} connectNulls dot={{ r: 2 }} />
              </LineChart>
            </ResponsiveContainer>
          </Card>

          <Card
            title="Corrections sent, by audience"
            empty={overview.correctionsByAudience.length === 0 ? "Nothing to chart in this range." : null}
            lead={overview.correctionsByAudience.length === 0 ? "No correction was sent in this range." : "Who was told that an earlier message was wrong: the customer impact."}
            numbers={
              overview.correctionsByAudience.length === 0 ? <p className="muted">None.</p> : <CountTable rows={corrections} />
            }
          >
            <CategoryBars rows={corrections} name="Sent" labelWidth={80} />
          </Card>

          <Card
            title="Revokes pulled, and how they ended"
            empty={revokeTotal === 0 ? "Nothing to chart: no step was pulled back in this range." : null}
            lead={
              <>
                <span className={styles.headline}>{revokeTotal}</span>
                steps pulled back by people{overview.revokesNotRead > 0 ? ` (the newest ${revokeTotal} read; ${overview.revokesNotRead} more not counted by outcome)` : ""}.
              </>
            }
            numbers={<CountTable rows={revokes} />}
          >
            <CategoryBars rows={revokes} name="Revokes" labelWidth={150} />
          </Card>
        </div>
      </section>
    </div>
  );
}
