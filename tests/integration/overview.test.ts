/**
 * The overview's figures against counts computed independently from the saga log: every step, pivot,
 * escalation, correction and audit event of the runs is read back through the store and counted in
 * plain code here, and getOverview's indexed queries must say the same. A forged irreversible
 * staging step (a gate bypass written straight into the log) must show as 1, not 0.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { sharedSagaStore } from "@/lib/core/db/prisma-saga-store";
import { readOverview, type Overview } from "@/lib/desks/overview/get-overview";
import { SagaEngine } from "@/lib/saga/engine";
import { ToolOutcomeUnknown } from "@/lib/saga/errors";
import { irreversibleBeforePivot } from "@/lib/saga/metrics";
import type { Actor } from "@/lib/saga/store";
import { resetHostedWorld } from "@/lib/demo/sim/host";
import { useTestDatabase } from "../api/api-test-kit";

const getPrisma = useTestDatabase("overview");
const person: Actor = { type: "user", id: "rita@example.com" };
const apology = { to: "bo@example.com", subject: "Your replacement is on its way", body: "We re-shipped order 2001." };

function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

let world = resetHostedWorld({ searchLagMs: 0 });
async function engine(): Promise<SagaEngine> {
  return new SagaEngine({ store: sharedSagaStore(await getPrisma()), registry: createSupportToolRegistry(world), recheckAfterMs: 10, backoffMs: 5 });
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
  for (const c of sent) for (const a of c.audience as string[]) audiences.set(a, (audiences.get(a) ?? 0) + 1);
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
    audiences: [...audiences].map(([audience, n]) => ({ audience, sent: n })),
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
