/**
 * The saga's health as Prometheus families, counted from the saga log's rows at scrape time, so every
 * figure is exact, is the same whichever app instance is scraped, and survives restarts: five grouped
 * reads (steps, pivots, escalations, runs, notification deliveries), each one aggregate query.
 * Labels are tools, classes, statuses, kinds and channels, never a run or step id.
 *
 * Counters (`_total`) count rows that never go away once written (a step, a requested compensation,
 * a raised escalation, a decided pivot); where a row's state can move back and forth (a step UNKNOWN
 * then CONFIRMED), the figure is a gauge of what the rows say now.
 */
import type { PrismaClient } from "@/lib/core/db/prisma";
import { EscalationKind, EscalationStatus, PivotStatus, StepStatus } from "@/packages/client/src/saga/vocabulary";
import { bucketCounts, histogramSamples, type Family } from "./exposition";

/** Pivot decision time buckets, seconds: a minute to a day and a half. */
const DECISION_BOUNDS = [60, 300, 900, 1800, 3600, 7200, 14400, 28800, 86400, 129600] as const;

const lower = (s: string) => s.toLowerCase();
const ageSeconds = (now: Date, since: Date | null | undefined) => (since ? Math.max(0, (now.getTime() - since.getTime()) / 1000) : 0);

/** Reads the rows and returns the saga's families (see the file comment for what each counts). */
export async function sagaMetricFamilies(prisma: PrismaClient, now: Date = new Date()): Promise<Family[]> {
  const [steps, pivots, decided, escalations, runs, deliveries] = await Promise.all([
    prisma.step.groupBy({ by: ["tool", "toolClass", "status", "compensationState"], _count: { _all: true }, _min: { updatedAt: true } }),
    prisma.pivot.groupBy({ by: ["status"], _count: { _all: true }, _min: { createdAt: true } }),
    prisma.pivot.findMany({ where: { status: { in: [PivotStatus.APPROVED, PivotStatus.REJECTED] }, decidedAt: { not: null } }, select: { status: true, createdAt: true, decidedAt: true } }),
    prisma.escalation.groupBy({ by: ["kind", "status"], _count: { _all: true }, _min: { createdAt: true } }),
    prisma.run.groupBy({ by: ["status"], _count: { _all: true } }),
    prisma.notificationDelivery.groupBy({ by: ["channel", "status"], _count: { _all: true } }),
  ]);

  // Steps: one group per (tool, class, status, compensation state).
  const calls = new Map<string, { tool: string; class: string; value: number }>();
  const outcomes = new Map<string, { tool: string; class: string; outcome: string; value: number }>();
  const compensations = { requested: 0, confirmed: 0, failed: 0 };
  let unknown = 0;
  let oldestUnknown: Date | null = null;
  for (const g of steps) {
    const n = g._count._all;
    const callKey = `${g.tool}\0${g.toolClass}`;
    const c = calls.get(callKey) ?? { tool: g.tool, class: lower(g.toolClass), value: 0 };
    c.value += n;
    calls.set(callKey, c);
    const outcomeKey = `${callKey}\0${g.status}`;
    const o = outcomes.get(outcomeKey) ?? { tool: g.tool, class: lower(g.toolClass), outcome: lower(g.status), value: 0 };
    o.value += n;
    outcomes.set(outcomeKey, o);
    if (g.compensationState !== "NONE") compensations.requested += n;
    if (g.compensationState === "CONFIRMED") compensations.confirmed += n;
    if (g.compensationState === "FAILED") compensations.failed += n;
    if (g.status === StepStatus.UNKNOWN) {
      unknown += n;
      const since = g._min.updatedAt;
      if (since && (!oldestUnknown || since < oldestUnknown)) oldestUnknown = since;
    }
  }

  const pending = pivots.find((p) => p.status === PivotStatus.PENDING);
  const decisionSeconds = (status: string) => decided.filter((p) => p.status === status).map((p) => ((p.decidedAt?.getTime() ?? 0) - p.createdAt.getTime()) / 1000);

  const open = escalations.filter((e) => e.status !== EscalationStatus.RESOLVED);
  const openByKind = new Map<string, { value: number; oldest: Date | null }>();
  for (const e of open) {
    const k = openByKind.get(e.kind) ?? { value: 0, oldest: null };
    k.value += e._count._all;
    const since = e._min.createdAt;
    if (since && (!k.oldest || since < k.oldest)) k.oldest = since;
    openByKind.set(e.kind, k);
  }
  const raisedByKind = new Map<string, number>();
  for (const e of escalations) raisedByKind.set(e.kind, (raisedByKind.get(e.kind) ?? 0) + e._count._all);
  // Every kind appears, at 0 when none is open, so an alert on it has a series to read.
  const kinds = [...new Set([...Object.values(EscalationKind), ...raisedByKind.keys()])].sort();

  const byLabel = <T>(rows: T[], map: (row: T) => { labels: Record<string, string>; value: number }) => rows.map(map);
  return [
    {
      name: "sagaboard_tool_calls_total",
      type: "counter",
      help: "Logged tool calls (saga log steps), by tool and class.",
      samples: [...calls.values()].map((c) => ({ labels: { tool: c.tool, class: c.class }, value: c.value })),
    },
    {
      name: "sagaboard_tool_call_outcomes",
      type: "gauge",
      help: "Logged tool calls by where their outcome stands now (intended, confirmed, failed, unknown, not_executed, compensated, compensation_failed).",
      samples: [...outcomes.values()].map((o) => ({ labels: { tool: o.tool, class: o.class, outcome: o.outcome }, value: o.value })),
    },
    { name: "sagaboard_steps_unknown", type: "gauge", help: "Steps whose outcome nobody knows now (UNKNOWN: reconcile or a person must settle them).", samples: [{ value: unknown }] },
    {
      name: "sagaboard_steps_unknown_oldest_age_seconds",
      type: "gauge",
      help: "How long the oldest UNKNOWN step has been unknown (0 when there is none).",
      samples: [{ value: ageSeconds(now, oldestUnknown) }],
    },
    { name: "sagaboard_compensations_requested_total", type: "counter", help: "Compensations requested (marked REQUESTED before the compensator was called).", samples: [{ value: compensations.requested }] },
    { name: "sagaboard_compensations_confirmed", type: "gauge", help: "Compensations confirmed by reading the real system back.", samples: [{ value: compensations.confirmed }] },
    { name: "sagaboard_compensations_failed", type: "gauge", help: "Compensations refused or never confirmed (each has an escalation or a manual repair).", samples: [{ value: compensations.failed }] },
    { name: "sagaboard_pivots_waiting", type: "gauge", help: "Pivots waiting for a reviewer.", samples: [{ value: pending?._count._all ?? 0 }] },
    { name: "sagaboard_pivot_oldest_waiting_age_seconds", type: "gauge", help: "How long the oldest waiting pivot has waited (0 when none waits).", samples: [{ value: ageSeconds(now, pending?._min.createdAt) }] },
    {
      name: "sagaboard_pivot_decision_seconds",
      type: "histogram",
      help: "Time from a pivot's request to a reviewer's decision, by decision.",
      samples: ["APPROVED", "REJECTED"].flatMap((status) => {
        const values = decisionSeconds(status);
        return histogramSamples(DECISION_BOUNDS, bucketCounts(DECISION_BOUNDS, values), values.reduce((a, b) => a + b, 0), { decision: lower(status) });
      }),
    },
    {
      name: "sagaboard_escalations_raised_total",
      type: "counter",
      help: "Escalations raised (questions the saga asked a person), by kind.",
      samples: kinds.map((kind) => ({ labels: { kind: lower(kind) }, value: raisedByKind.get(kind) ?? 0 })),
    },
    {
      name: "sagaboard_escalations_open",
      type: "gauge",
      help: "Escalations open or claimed (not resolved), by kind.",
      samples: kinds.map((kind) => ({ labels: { kind: lower(kind) }, value: openByKind.get(kind)?.value ?? 0 })),
    },
    {
      name: "sagaboard_escalation_oldest_open_age_seconds",
      type: "gauge",
      help: "How long the oldest unresolved escalation of each kind has been open (0 when none is).",
      samples: kinds.map((kind) => ({ labels: { kind: lower(kind) }, value: ageSeconds(now, openByKind.get(kind)?.oldest) })),
    },
    {
      name: "sagaboard_runs_stuck",
      type: "gauge",
      help: "Approved runs whose agent went quiet (open STUCK_AFTER_PIVOT escalations).",
      samples: [{ value: openByKind.get(EscalationKind.STUCK_AFTER_PIVOT)?.value ?? 0 }],
    },
    { name: "sagaboard_runs", type: "gauge", help: "Runs by status.", samples: byLabel(runs, (r) => ({ labels: { status: lower(r.status) }, value: r._count._all })) },
    {
      name: "sagaboard_notification_deliveries",
      type: "gauge",
      help: "Webhook and email deliveries by channel and status (failed: every attempt failed; an admin may replay it).",
      samples: byLabel(deliveries, (d) => ({ labels: { channel: d.channel, status: lower(d.status) }, value: d._count._all })),
    },
  ];
}
