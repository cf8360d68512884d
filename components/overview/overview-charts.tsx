"use client";

import Link from "@/components/link";
import type { ReactNode } from "react";
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

/** Seconds as whole minutes (null stays null). */
function minutes(sec: number | null): number | null {
  return sec === null ? null : Math.round(sec / 60);
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
      {empty ? (
        <p className={styles.noChart}>{empty}</p>
      ) : (
        <div className={styles.chart}>{children}</div>
      )}
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

/** One series of a bucket chart: its name, colour and value in each bucket (null: nothing to draw). */
interface Series {
  name: string;
  color: string;
  value: (b: OverviewBucket) => number | null;
}

/** A bucket field as a series. */
function field(key: keyof OverviewBucket, name: string, color: string): Series {
  return { name, color, value: (b) => b[key] as number | null };
}

/** The top of a chart's scale: `max` rounded up to 1, 2 or 5 times a power of ten. */
function scaleTop(max: number): number {
  if (max <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  return [1, 2, 5, 10].map((m) => m * power).find((top) => top >= max) ?? 10 * power;
}

/** The legend of a chart with more than one series. */
function Legend({ series }: { series: Series[] }) {
  if (series.length < 2) return null;
  return (
    <ul className={styles.legend}>
      {series.map((s) => (
        <li key={s.name}>
          <span className={styles.swatch} style={{ background: s.color }} />
          {s.name}
        </li>
      ))}
    </ul>
  );
}

/**
 * Bars per bucket of the range, one bar per series, drawn with HTML and CSS. The server sends them
 * drawn: the first version drew them with a chart library in the browser after the page showed, seven
 * charts in tasks of 260-370 ms that held the page (and the next page someone opened) until they ended.
 * Hovering a bucket names its values; the numbers are in the card's table.
 */
function BucketBars({ overview, series, unit = "" }: { overview: Overview; series: Series[]; unit?: string }) {
  const label = tick(overview.bucket);
  const top = scaleTop(Math.max(0, ...overview.buckets.flatMap((b) => series.map((s) => s.value(b) ?? 0))));
  // Labels under at most seven buckets, or four on a phone (the others are hidden there by CSS).
  const every = Math.ceil(overview.buckets.length / 7);
  const everyNarrow = every * Math.ceil(Math.ceil(overview.buckets.length / 4) / every);
  const words = (v: number | null) => (v === null ? "none" : `${v}${unit}`);
  return (
    <div className={styles.barChart} data-testid="chart" role="img" aria-label={`${series.map((s) => s.name).join(", ")} per ${overview.bucket}; the scale goes to ${top}${unit}`}>
      <Legend series={series} />
      <div className={styles.plot}>
        <div className={styles.scale} aria-hidden="true">
          <span>{`${top}${unit}`}</span>
          <span>{top % 2 === 0 ? `${top / 2}${unit}` : ""}</span>
          <span>0</span>
        </div>
        <div className={styles.columns}>
          {overview.buckets.map((b, i) => (
            <div key={b.start} className={styles.column} title={`${label(b.start)}: ${series.map((s) => `${s.name} ${words(s.value(b))}`).join(", ")}`}>
              <div className={styles.barGroup}>
                {series.map((s) => {
                  const v = s.value(b) ?? 0;
                  return <span key={s.name} className={styles.bar} style={{ height: `${(v / top) * 100}%`, background: s.color }} />;
                })}
              </div>
              <span className={`${styles.tick} ${i % everyNarrow === 0 ? "" : styles.wideOnly}`}>{i % every === 0 ? label(b.start) : ""}</span>
            </div>
          ))}
        </div>
      </div>
    </div>
  );
}

/** Horizontal bars of counts by category (`rows`: label and count), drawn with HTML and CSS. */
function CategoryBars({ rows, name }: { rows: { label: string; count: number }[]; name: string }) {
  const top = Math.max(1, ...rows.map((r) => r.count));
  return (
    <div className={styles.categoryChart} data-testid="chart" role="img" aria-label={`${name} by category; the most is ${top}`}>
      {rows.map((r) => (
        <div key={r.label} className={styles.categoryRow} title={`${r.label}: ${r.count}`}>
          <span className={styles.categoryLabel}>{r.label}</span>
          <span className={styles.categoryTrack}>
            <span className={styles.categoryBar} style={{ width: `${(r.count / top) * 100}%` }} />
          </span>
          <span className={styles.categoryCount}>{r.count}</span>
        </div>
      ))}
    </div>
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
export function OverviewCharts({ overview, notice, operations = false }: { overview: Overview; notice: string | null; /** Link to the operations page (its readers, the admins). */ operations?: boolean }) {
  const t = overview.totals;
  const waitingTotal = overview.waiting.reduce((s, w) => s + w.total, 0);
  const empty = t.runsIncomplete === 0 && t.compensationsRequested === 0 && t.repairsResolved === 0 && overview.correctionsByAudience.length === 0 && overview.revokesByOutcome.every((r) => r.count === 0);
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
          {operations && (
            <p className="small">
              Whether Sagaboard itself is healthy (workers, task queue, notifier, sweeps): <Link href="/admin/operations">Operations</Link>
            </p>
          )}
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
            <BucketBars overview={overview} series={[field("irreversibleBeforePivot", "Irreversible before the pivot", COLORS.bad)]} />
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
            <BucketBars overview={overview} series={[field("duplicatesPrevented", "Duplicates prevented", COLORS.good)]} />
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
            <BucketBars
              overview={overview}
              series={[field("compensationsRequested", "Requested", COLORS.muted), field("compensationsConfirmed", "Confirmed", COLORS.good), field("compensationsFailed", "Failed", COLORS.bad)]}
            />
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
            <BucketBars overview={overview} series={[field("runsIncomplete", "Incomplete", COLORS.warn)]} />
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
            <BucketBars
              overview={overview}
              unit=" min"
              series={[
                { name: "Median", color: COLORS.primary, value: (b) => minutes(b.repairMedianSec) },
                { name: "90th percentile", color: COLORS.warn, value: (b) => minutes(b.repairP90Sec) },
              ]}
            />
          </Card>

          <Card
            title="Corrections sent, by audience"
            empty={overview.correctionsByAudience.length === 0 ? "Nothing to chart in this range." : null}
            lead={overview.correctionsByAudience.length === 0 ? "No correction was sent in this range." : "Who was told that an earlier message was wrong: the customer impact."}
            numbers={
              overview.correctionsByAudience.length === 0 ? <p className="muted">None.</p> : <CountTable rows={corrections} />
            }
          >
            <CategoryBars rows={corrections} name="Sent" />
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
            <CategoryBars rows={revokes} name="Revokes" />
          </Card>
        </div>
      </section>
    </div>
  );
}
