/**
 * The overview's figures against counts computed independently from the saga log: every step, pivot,
 * escalation, correction and audit event of the runs is read back through the store and counted in
 * plain code here, and getOverview's indexed queries must say the same. A forged irreversible
 * staging step (a gate bypass written straight into the log) must show as 1, not 0. The hourly counts
 * the database keeps for two of the figures are checked against the log after each kind of change.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { sharedSagaStore } from "@/lib/core/db/prisma-saga-store";
import { getOverview, readOverview, type Overview } from "@/lib/desks/overview/get-overview";
import { foldAllOverviewDeltas, foldOverviewDeltas, overviewFoldEveryMs, startOverviewFoldDuty } from "@/lib/desks/overview/fold-overview-counts";
import { openPrisma } from "@/lib/core/db/prisma";
import { ToolOutcomeUnknown } from "@/packages/client/src/saga/errors";
import { irreversibleBeforePivot } from "@/packages/client/src/saga/metrics";
import type { Actor } from "@/packages/client/src/saga/store";
import { resetHostedWorld } from "@/lib/demo/sim/host";
import { useTestDatabase } from "../api/api-test-kit";
import { ReviewerEngine } from "@/packages/client/src/saga/reviewer-engine";

const getPrisma = useTestDatabase("overview");
const person: Actor = { type: "user", id: "rita@example.com" };
const apology = { to: "bo@example.com", subject: "Your replacement is on its way", body: "We re-shipped order 2001." };

function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

let world = resetHostedWorld({ searchLagMs: 0 });
async function engine(): Promise<ReviewerEngine> {
  return new ReviewerEngine({ store: sharedSagaStore(await getPrisma()), registry: createSupportToolRegistry(world), recheckAfterMs: 10, backoffMs: 5 });
}

beforeAll(async () => {
  world = resetHostedWorld({ searchLagMs: 0 });
  const e = await engine();
  // A completed run: staged, approved, committed (its email is irreversible but after the pivot).
  const done = await e.startRun({ title: "Completed", agent: "support-agent" });
  await done.call("create_email_draft", apology);
  const pivot = await done.requestPivot({ summary: "Send it.", plan: [{ tool: "send_email", args: apology }] });
  await e.decidePivot(pivot.id, { approve: true, actor: person, planHash: pivot.planHash });
  expect((await done.call("send_email", apology)).status).toBe("ok");
  await done.complete();

  // An unwound run: two compensations requested and confirmed, and a correction for the sent email.
  const unwound = await e.startRun({ title: "Unwound", agent: "support-agent" });
  await unwound.call("create_ticket_draft", { summary: "Reship 2001", orderId: "2001" });
  await unwound.call("create_email_draft", apology);
  const second = await unwound.requestPivot({ summary: "Send it.", plan: [{ tool: "send_email", args: apology }] });
  await e.decidePivot(second.id, { approve: true, actor: person, planHash: second.planHash });
  expect((await unwound.call("send_email", apology)).status).toBe("ok");
  await e.unwind(unwound.runId, person, "customer cancelled");

  // A duplicate prevented: the ticket was created but the answer was lost; the retry reconciles it.
  const dup = await e.startRun({ title: "Reconciled", agent: "support-agent" });
  world.faults.inject("ticketing.create", { kind: "timeout_after_effect" });
  await expect(dup.call("create_ticket", { summary: "Price match 1182", orderId: "1182" })).rejects.toBeInstanceOf(ToolOutcomeUnknown);
  expect((await dup.call("create_ticket", { summary: "Price match for order 1182", orderId: "1182" })).status).toBe("ok");

  // A failed compensation, repaired by a person: one manual repair time.
  const failing = await e.startRun({ title: "Failed refund", agent: "support-agent" });
  await failing.call("create_ticket", { summary: "Refund 3003", orderId: "3003" });
  world.faults.inject("ticketing.close", { kind: "reject", status: 409 }, { times: 10 });
  await e.unwind(failing.runId, person, "wrong order");
  const prisma = await getPrisma();
  const broken = await prisma.escalation.findFirstOrThrow({ where: { runId: failing.runId, kind: "COMPENSATION_FAILED" } });
  await e.resolveEscalation(broken.id, { actor: person, note: "closed it by hand" });

  // Runs still waiting: one at its pivot, one held for approval, one just running.
  const waiting = await e.startRun({ title: "Waiting", agent: "support-agent" });
  await waiting.call("create_email_draft", apology);
  await waiting.requestPivot({ summary: "Send it.", plan: [{ tool: "send_email", args: apology }] });
  const held = await e.startRun({ title: "Held", agent: "support-agent" });
  expect((await held.call("send_email", apology)).status).toBe("approval_required");

  // A correction sent to the customer (the support desk's send is its own flow; here its result).
  const correction = await prisma.correction.findFirstOrThrow({ where: { runId: unwound.runId } });
  await prisma.correction.update({ where: { id: correction.id }, data: { status: "SENT", sentAt: new Date(), sentBy: "sam@example.com" } });
}, 60_000);

/** The figures, counted in plain code from every row the store gives back. */
async function fromTheLog() {
  const prisma = await getPrisma();
  const store = sharedSagaStore(prisma);
  const runs = await prisma.run.findMany();
  let irreversible = 0;
  let duplicates = 0;
  let requested = 0;
  let confirmed = 0;
  let failed = 0;
  for (const run of runs) {
    const steps = await store.listSteps(run.id);
    irreversible += irreversibleBeforePivot(steps);
    for (const s of steps) {
      if (s.compensationRequestedAt) requested++;
      if (s.compensationRequestedAt && s.compensationState === "CONFIRMED") confirmed++;
      if (s.compensationRequestedAt && s.compensationState === "FAILED") failed++;
    }
    duplicates += (await store.listAuditEvents(run.id)).filter((e) => e.type === "step.reconciled" && (e.data as { outcome?: string }).outcome === "CONFIRMED").length;
  }
  const escalations = await store.listEscalations({});
  const repairs = escalations
    .filter((e) => e.status === "RESOLVED" && e.kind !== "APPROVAL_REQUIRED" && e.resolvedBy !== "sla" && e.resolvedAt)
    .map((e) => Math.max(0, Math.round((e.resolvedAt!.getTime() - e.createdAt.getTime()) / 1000)))
    .sort((a, b) => a - b);
  const open = escalations.filter((e) => e.status !== "RESOLVED");
  const corrections = (await Promise.all(runs.map((r) => store.listCorrections(r.id)))).flat();
  const sent = await prisma.correction.findMany({ where: { status: "SENT" } });
  const audiences = new Map<string, number>();
  // Once per distinct audience a correction names; only text members name one.
  for (const c of sent) for (const a of new Set((c.audience as unknown[]).filter((x) => typeof x === "string"))) audiences.set(a, (audiences.get(a) ?? 0) + 1);
  const pendingPivots = (await Promise.all(runs.map((r) => store.listPivots(r.id)))).flat().filter((p) => p.status === "PENDING");
  return {
    totals: {
      irreversibleBeforePivot: irreversible,
      duplicatesPrevented: duplicates,
      compensationsRequested: requested,
      compensationsConfirmed: confirmed,
      compensationsFailed: failed,
      runsIncomplete: runs.filter((r) => ["RUNNING", "AWAITING_PIVOT", "COMMITTING", "UNWINDING", "NEEDS_ATTENTION"].includes(r.status)).length,
      repairsResolved: repairs.length,
      repairMedianSec: percentile(repairs, 0.5),
      repairP90Sec: percentile(repairs, 0.9),
    },
    waiting: {
      PIVOT: pendingPivots.length,
      ...Object.fromEntries(["APPROVAL_REQUIRED", "COMPENSATION_FAILED", "OUTCOME_UNKNOWN", "STUCK_AFTER_PIVOT", "REVOKE_OUT_OF_WINDOW"].map((k) => [k, open.filter((e) => e.kind === k).length])),
      CORRECTION: corrections.filter((c) => c.status === "DRAFT").length,
    } as Record<string, number>,
    audiences: [...audiences].map(([audience, n]) => ({ audience, sent: n })).sort((a, b) => b.sent - a.sent || a.audience.localeCompare(b.audience)),
  };
}

function waitingOf(o: Overview): Record<string, number> {
  return Object.fromEntries(o.waiting.map((w) => [w.kind, w.total]));
}

describe("the overview", () => {
  it("says what the saga log says, figure by figure", async () => {
    const expected = await fromTheLog();
    // The scenario produced each figure at least once, so a query that counted nothing would fail.
    expect(expected.totals.duplicatesPrevented).toBeGreaterThan(0);
    expect(expected.totals.compensationsConfirmed).toBeGreaterThan(0);
    expect(expected.totals.compensationsFailed).toBeGreaterThan(0);
    expect(expected.totals.repairsResolved).toBeGreaterThan(0);
    expect(expected.totals.runsIncomplete).toBeGreaterThan(0);
    expect(expected.waiting.PIVOT).toBeGreaterThan(0);
    expect(expected.waiting.APPROVAL_REQUIRED).toBeGreaterThan(0);
    const overview = await readOverview(await getPrisma(), "24h");
    expect(overview.totals).toEqual(expected.totals);
    expect(waitingOf(overview)).toEqual(expected.waiting);
    expect(overview.correctionsByAudience).toEqual(expected.audiences);
    // Bucketed by hour: the buckets add up to the totals.
    expect(overview.buckets.reduce((s, b) => s + b.runsIncomplete, 0)).toBe(expected.totals.runsIncomplete);
    expect(overview.waiting.find((w) => w.kind === "PIVOT")?.ages.under1h).toBe(expected.waiting.PIVOT);
  });

  it("counts an irreversible call recorded before the pivot (a bypass of the gate) as 1, not 0", async () => {
    const prisma = await getPrisma();
    const run = await prisma.run.findFirstOrThrow({ where: { title: "Held" } });
    const now = new Date();
    await prisma.step.create({
      data: {
        id: "stp_forged", runId: run.id, stepIdx: 99, tool: "send_email", toolClass: "IRREVERSIBLE", stepKey: "f".repeat(32), args: apology, argsHash: "0".repeat(64),
        status: "CONFIRMED", phase: "STAGING", policyVersion: 1, audience: ["customer"], createdAt: now, updatedAt: now,
      },
    });
    const expected = await fromTheLog();
    expect(expected.totals.irreversibleBeforePivot).toBe(1);
    expect((await readOverview(prisma, "24h")).totals.irreversibleBeforePivot).toBe(1);
    await prisma.step.delete({ where: { id: "stp_forged" } });
  });

  it("leaves out what happened before the range", async () => {
    const overview = await readOverview(await getPrisma(), "24h");
    const prisma = await getPrisma();
    const old = new Date(Date.now() - 3 * 86400_000);
    await prisma.run.create({ data: { id: "run_old_one", title: "Old", agent: "a", metadata: {}, status: "RUNNING", createdAt: old, updatedAt: old } });
    expect((await readOverview(prisma, "24h")).totals.runsIncomplete).toBe(overview.totals.runsIncomplete);
    expect((await readOverview(prisma, "7d")).totals.runsIncomplete).toBe(overview.totals.runsIncomplete + 1);
  });
});

/** What the counts hold now, per metric, span, period and key: the folded counts plus the unfolded deltas (zeros left out). */
async function countsHeld(): Promise<Record<string, number>> {
  const prisma = await getPrisma();
  const held: Record<string, number> = {};
  const add = (id: string, n: number) => (held[id] = (held[id] ?? 0) + n);
  for (const row of await prisma.overviewCount.findMany()) add(`${row.metric} ${row.span} ${row.period} ${row.key}`, row.n);
  for (const d of await prisma.overviewDelta.findMany()) {
    add(`${d.metric} hour ${d.hour} ${d.key}`, d.n);
    add(`${d.metric} day ${d.hour.slice(0, 10)} ${d.key}`, d.n);
  }
  return Object.fromEntries(Object.entries(held).filter(([, n]) => n !== 0));
}

/** The same, counted in plain code from the log's rows. */
async function countsFromTheLog(): Promise<Record<string, number>> {
  const prisma = await getPrisma();
  const counts: Record<string, number> = {};
  const add = (metric: string, at: Date, key: string) => {
    for (const id of [`${metric} hour ${at.toISOString().slice(0, 13)} ${key}`, `${metric} day ${at.toISOString().slice(0, 10)} ${key}`]) counts[id] = (counts[id] ?? 0) + 1;
  };
  for (const s of await prisma.step.findMany({ where: { compensationRequestedAt: { not: null } } })) add("compensation", s.compensationRequestedAt!, s.compensationState);
  for (const e of await prisma.auditEvent.findMany({ where: { type: "step.reconciled" } })) {
    if ((e.data as { outcome?: string }).outcome === "CONFIRMED") add("duplicate_prevented", e.at, "");
  }
  return counts;
}

describe("the overview's hourly and daily counts (kept by the database beside the log)", () => {
  it("hold what the log holds before a fold and after it, and a fold leaves no delta behind", async () => {
    const prisma = await getPrisma();
    const expected = await countsFromTheLog();
    expect(Object.keys(expected).length).toBeGreaterThan(1);
    expect(await prisma.overviewDelta.count()).toBeGreaterThan(0); // the scenario's changes, not yet folded
    const before = await readOverview(prisma, "24h");
    expect(await countsHeld()).toEqual(expected);
    expect(await foldAllOverviewDeltas(prisma)).toBeGreaterThan(0);
    expect(await prisma.overviewDelta.count()).toBe(0);
    expect(await countsHeld()).toEqual(expected);
    expect((await readOverview(prisma, "24h")).totals).toEqual(before.totals);
  });

  it("follow a compensation through its state, a move to another hour and its step's deletion", async () => {
    const prisma = await getPrisma();
    const run = await prisma.run.findFirstOrThrow({ where: { title: "Held" } });
    const now = Date.now();
    const twoHoursAgo = new Date(now - 2 * 3600_000);
    const base = (await readOverview(prisma, "7d")).totals;
    const totals = async (range: "24h" | "7d") => {
      const t = (await readOverview(prisma, range)).totals;
      return { requested: t.compensationsRequested, confirmed: t.compensationsConfirmed, failed: t.compensationsFailed };
    };
    const check = async () => expect(await countsHeld()).toEqual(await countsFromTheLog());

    await prisma.step.create({
      data: {
        id: "stp_comp", runId: run.id, stepIdx: 98, tool: "create_ticket", toolClass: "COMPENSATABLE", stepKey: "c".repeat(32), args: {}, argsHash: "1".repeat(64),
        status: "CONFIRMED", phase: "STAGING", policyVersion: 1, audience: [], createdAt: twoHoursAgo, updatedAt: twoHoursAgo, compensationState: "REQUESTED", compensationRequestedAt: twoHoursAgo,
      },
    });
    await check();
    expect(await totals("7d")).toEqual({ requested: base.compensationsRequested + 1, confirmed: base.compensationsConfirmed, failed: base.compensationsFailed });

    await prisma.step.update({ where: { id: "stp_comp" }, data: { compensationState: "FAILED" } });
    await check();
    expect(await totals("7d")).toEqual({ requested: base.compensationsRequested + 1, confirmed: base.compensationsConfirmed, failed: base.compensationsFailed + 1 });
    await foldAllOverviewDeltas(prisma); // what follows changes an hour already folded
    await prisma.step.update({ where: { id: "stp_comp" }, data: { compensationState: "CONFIRMED" } });
    await check();
    expect(await totals("7d")).toEqual({ requested: base.compensationsRequested + 1, confirmed: base.compensationsConfirmed + 1, failed: base.compensationsFailed });

    // Requested three days ago: out of the last 24 hours, still in the last 7 days.
    const in24h = await totals("24h");
    await prisma.step.update({ where: { id: "stp_comp" }, data: { compensationRequestedAt: new Date(now - 3 * 86400_000) } });
    await check();
    expect(await totals("24h")).toEqual({ requested: in24h.requested - 1, confirmed: in24h.confirmed - 1, failed: in24h.failed });
    expect((await totals("7d")).requested).toBe(base.compensationsRequested + 1);

    await prisma.step.delete({ where: { id: "stp_comp" } });
    await check();
    await foldAllOverviewDeltas(prisma);
    await check();
    expect(await totals("7d")).toEqual({ requested: base.compensationsRequested, confirmed: base.compensationsConfirmed, failed: base.compensationsFailed });
  });

  it("write nothing for a logged step that has no compensation (the hot path's intent and outcome)", async () => {
    const prisma = await getPrisma();
    await foldAllOverviewDeltas(prisma);
    const e = await engine();
    const run = await e.startRun({ title: "Plain", agent: "support-agent" });
    expect((await run.call("create_email_draft", apology)).status).toBe("ok");
    expect(await prisma.overviewDelta.count()).toBe(0);
  });

  it("are moved once when folds run at once on two connections", async () => {
    const prisma = await getPrisma();
    const other = await openPrisma(process.env.DATABASE_URL!);
    try {
      const run = await prisma.run.findFirstOrThrow({ where: { title: "Held" } });
      const at = (h: number) => new Date(Date.now() - h * 3600_000);
      for (let i = 0; i < 60; i++) {
        await prisma.step.create({
          data: {
            id: `stp_many_${i}`, runId: run.id, stepIdx: 200 + i, tool: "create_ticket", toolClass: "COMPENSATABLE", stepKey: `m${String(i).padStart(31, "0")}`, args: {}, argsHash: "2".repeat(64),
            status: "CONFIRMED", phase: "STAGING", policyVersion: 1, audience: [], createdAt: at(i % 5), updatedAt: at(i % 5), compensationState: "REQUESTED", compensationRequestedAt: at(i % 5),
          },
        });
      }
      await prisma.step.updateMany({ where: { id: { startsWith: "stp_many_" } }, data: { compensationState: "CONFIRMED" } });
      const deltas = await prisma.overviewDelta.count();
      expect(deltas).toBeGreaterThanOrEqual(180);
      const foldSmall = async (client: typeof prisma) => {
        let moved = 0;
        for (let n = -1; n !== 0; moved += n) n = await foldOverviewDeltas(client, 7);
        return moved;
      };
      const [a, b] = await Promise.all([foldSmall(prisma), foldSmall(other)]);
      expect(a + b).toBe(deltas);
      expect(await prisma.overviewDelta.count()).toBe(0);
      expect(await countsHeld()).toEqual(await countsFromTheLog());
    } finally {
      await other.$disconnect();
    }
  });

  it("fold on a timer in every app process, set by SAGABOARD_OVERVIEW_FOLD_MS", async () => {
    expect(overviewFoldEveryMs({})).toBe(30_000);
    expect(overviewFoldEveryMs({ SAGABOARD_OVERVIEW_FOLD_MS: "250" })).toBe(250);
    expect(overviewFoldEveryMs({ SAGABOARD_OVERVIEW_FOLD_MS: "0" })).toBeNull();
    expect(() => overviewFoldEveryMs({ SAGABOARD_OVERVIEW_FOLD_MS: "soon" })).toThrow(/SAGABOARD_OVERVIEW_FOLD_MS must be a whole number of milliseconds/);
    const prisma = await getPrisma();
    await prisma.step.update({ where: { id: "stp_many_0" }, data: { compensationState: "FAILED" } });
    expect(await prisma.overviewDelta.count()).toBe(2);
    const duty = startOverviewFoldDuty({ prisma: getPrisma, everyMs: 100 });
    try {
      await expect.poll(() => prisma.overviewDelta.count(), { timeout: 5000 }).toBe(0);
    } finally {
      duty.stop();
    }
    expect(await countsHeld()).toEqual(await countsFromTheLog());
  });

  it("pick each day's repair median and p90 by rank, and count a correction once per audience it names", async () => {
    const prisma = await getPrisma();
    const run = await prisma.run.findFirstOrThrow({ where: { title: "Held" } });
    const now = Date.now();
    // Repair times in ms (halves and a negative clock skew among them), resolved two and four days ago.
    const plans: [number, number[]][] = [
      [2, [1500, 2499, 61_000, 3_600_000, 10, 499, 500, 2500, -3000]],
      [4, [999, 7000]],
    ];
    let i = 0;
    for (const [daysAgo, durations] of plans) {
      for (const ms of durations) {
        const resolvedAt = new Date(now - daysAgo * 86400_000 + i * 1000);
        await prisma.escalation.create({
          data: { id: `esc_rep_${i}`, runId: run.id, kind: "OUTCOME_UNKNOWN", status: "RESOLVED", title: "Repair", detail: {}, dedupeKey: `rep-${i}`, resolvedBy: "rita@example.com", resolvedAt, createdAt: new Date(resolvedAt.getTime() - ms) },
        });
        i++;
      }
    }
    // Closed by the SLA sweep, not by a person: not a repair.
    await prisma.escalation.create({
      data: { id: "esc_rep_sla", runId: run.id, kind: "OUTCOME_UNKNOWN", status: "RESOLVED", title: "Expired", detail: {}, dedupeKey: "rep-sla", resolvedBy: "sla", resolvedAt: new Date(now - 86400_000), createdAt: new Date(now - 2 * 86400_000) },
    });
    // Corrections sent yesterday: one names the customer twice.
    for (const [j, audience] of ([["customer", "customer", "finance"], ["finance"], ["partner"]] as unknown[][]).entries()) {
      const at = new Date(now - 86400_000);
      await prisma.step.create({
        data: {
          id: `stp_aud_${j}`, runId: run.id, stepIdx: 300 + j, tool: "send_email", toolClass: "IRREVERSIBLE", stepKey: `a${String(j).padStart(31, "0")}`, args: {}, argsHash: "3".repeat(64),
          status: "CONFIRMED", phase: "COMMIT", policyVersion: 1, audience: [], createdAt: at, updatedAt: at,
        },
      });
      await prisma.correction.create({ data: { id: `cor_aud_${j}`, runId: run.id, stepId: `stp_aud_${j}`, audience: audience as string[], rank: 2, status: "SENT", subject: "Sorry", body: "In error.", sentAt: at } });
    }

    const overview = await readOverview(prisma, "7d");
    const expected = await fromTheLog();
    expect(overview.totals.repairsResolved).toBe(expected.totals.repairsResolved);
    expect([overview.totals.repairMedianSec, overview.totals.repairP90Sec]).toEqual([expected.totals.repairMedianSec, expected.totals.repairP90Sec]);
    expect(overview.correctionsByAudience).toEqual(expected.audiences);
    expect(overview.correctionsByAudience.find((a) => a.audience === "customer")!.sent).toBe(expected.audiences.find((a) => a.audience === "customer")!.sent);
    // Each day's figures, from the escalations in plain code.
    const byDay = new Map<string, number[]>();
    for (const e of await prisma.escalation.findMany({ where: { status: "RESOLVED", NOT: { resolvedBy: "sla" }, kind: { not: "APPROVAL_REQUIRED" } } })) {
      const day = e.resolvedAt!.toISOString().slice(0, 10);
      byDay.set(day, [...(byDay.get(day) ?? []), Math.max(0, Math.round((e.resolvedAt!.getTime() - e.createdAt.getTime()) / 1000))]);
    }
    const seen = overview.buckets.filter((b) => b.repairsResolved > 0);
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(Object.fromEntries(seen.map((b) => [b.start.slice(0, 10), [b.repairsResolved, b.repairMedianSec, b.repairP90Sec]]))).toEqual(
      Object.fromEntries([...byDay].map(([day, secs]) => {
        const sorted = secs.sort((a, b) => a - b);
        return [day, [sorted.length, percentile(sorted, 0.5), percentile(sorted, 0.9)]];
      })),
    );
  });

  it("people who open the overview together share one read, and a later visit reads again", async () => {
    const person = { id: "usr_overview", email: "overview@example.com", name: "Olive", role: "viewer" as const };
    // The first starts a read; the others, asking while it runs, share the one queued after it.
    const open = () => getOverview({ actor: person, range: "7d" });
    const [a, b, c] = await Promise.all([open(), open(), open()]);
    expect(b).toBe(c);
    expect(a).not.toBe(b);
    expect(a.totals).toEqual(b.totals);
    const later = await getOverview({ actor: person, range: "7d" });
    expect(later).not.toBe(b);
    expect(later.totals).toEqual(a.totals);
    expect(later.totals).toEqual((await readOverview(await getPrisma(), "7d")).totals);
    // Each range is its own read.
    const [week, day] = await Promise.all([getOverview({ actor: person, range: "7d" }), getOverview({ actor: person, range: "24h" })]);
    expect(week.range).toBe("7d");
    expect(day.range).toBe("24h");
  });
});
