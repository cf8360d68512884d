/**
 * Fault matrix, second pass: approval unavailable. What happens when the person a run waits for is not
 * there, or is there twice, or leaves mid-decision. On this run's store (SQLite, or PostgreSQL with
 * SAGABOARD_TEST_PG=1), with the simulated systems' ledger as the judge (tests/faults/fault-matrix.ts).
 *
 *   pivot-expired       a run stages a draft and asks for a pivot that sends an email; nobody decides.
 *                       Past its SLA's expiry (judged by the database clock) two SLA sweeps run at
 *                       once: the pivot is rejected once, by the SLA, never approved; the agent's
 *                       wait returns the rejection with why; committing the plan is refused and the
 *                       email called directly is held. Then the run follows its policy: odd trials
 *                       unwind (the draft deleted), even ones wait (a new pivot, pending).
 *   held-call-expired   an irreversible call outside any pivot is held; nobody decides; at expiry it is
 *                       rejected once, never approved; the agent's next call of it is refused with why.
 *   two-reviewers       two reviewers decide one pivot at the same moment (approve vs reject, or both
 *                       approve): one decision wins, the other is told (already_decided), and the plan
 *                       runs once or not at all, as the winner decided.
 *   two-reviewers-held-call  the same for a held irreversible call (approve vs reject at once): one
 *                       decision, the other reviewer's item skipped with who decided; the call runs once
 *                       when approved (the agent's next call), never when rejected.
 *   session-ended       a reviewer opens the pivot, her session ends (signed out everywhere), then she
 *                       approves: refused as signed out, the pivot still pending; it then expires.
 * Every trial: email.send effects counted in the ledger against what was approved, 0 duplicates, 0 lost
 * intents, no INTENDED/UNKNOWN row at rest. Trials: SAGABOARD_FAULT_MATRIX_TRIALS (default 2 per fault).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "@/packages/client/src/protocol/errors";
import { requireUser, runWithSessionReader, type CurrentUser } from "@/lib/server/auth/current-user";
import { endAllUserSessions, startUserSession } from "@/lib/server/auth/user-sessions";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { sharedSagaStore } from "@/lib/core/db/prisma-saga-store";
import { approvePivot } from "@/lib/desks/pivots/approve-pivot";
import { getPivotScreen } from "@/lib/desks/pivots/get-pivot-screen";
import { rejectPivot } from "@/lib/desks/pivots/reject-pivot";
import { decideHeldCalls } from "@/lib/desks/escalations/decide-held-calls";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import { SagaError } from "@/packages/client/src/saga/errors";
import type { RunContext } from "@/packages/client/src/saga/run-context";
import { EscalationKind, PivotStatus, RunStatus, StepStatus } from "@/packages/client/src/saga/vocabulary";
import { resetHostedWorld } from "@/lib/demo/sim/host";
import type { World } from "@/lib/demo/sim/world";
import { escalationSla, loadSlaRules, pivotSla } from "@/lib/server/sla/sla-rules";
import { sweepSlas } from "@/lib/server/sla/sweep-slas";
import { createUser } from "@/lib/server/users/create-user";
import { addSupportTools, useTestDatabase } from "../api/api-test-kit";
import { backdate, figuresFor, matrixLine, MATRIX_TRIALS, recordMatrixLine } from "./fault-matrix";

const getPrisma = useTestDatabase("fault-approval");
const AGENT = { type: "agent" as const, id: "fault-agent" };
let world: World;
let engine: SagaEngine;

const email = (n: number) => ({ to: "bo@example.com", subject: `Your replacement ${n}`, body: `We re-shipped order ${n}.` });
const sends = () => world.ledger.effects({ op: "email.send" }).length;

beforeAll(async () => {
  const prisma = await getPrisma();
  await addSupportTools();
  world = resetHostedWorld({ searchLagMs: 0 });
  engine = new SagaEngine({ store: sharedSagaStore(prisma), registry: createSupportToolRegistry(world), recheckAfterMs: 10, backoffMs: 5 });
});

/** A run with a staged draft, waiting at a pivot whose plan sends one email. */
async function waitingRun(n: number): Promise<{ run: RunContext; pivot: { id: string; planHash: string } }> {
  const run = await engine.startRun({ title: `approval fault ${n}`, agent: AGENT.id });
  expect((await run.call("create_email_draft", email(n))).status).toBe("ok");
  const pivot = await run.requestPivot({ summary: `Email Bo about order ${n}.`, plan: [{ tool: "send_email", args: email(n) }] });
  return { run, pivot };
}

/** Seconds past a pivot's expiry, from the rules in force (not a number copied from them). */
async function pastPivotExpiry(): Promise<number> {
  const policy = pivotSla(await loadSlaRules(await getPrisma()), ["send_email"]);
  expect(policy.expireSec, "pivots expire by default").not.toBeNull();
  return policy.expireSec! + 60;
}

/** Two SLA sweeps at once (two notifiers); returns every id they expired. */
async function sweepTwice(): Promise<string[]> {
  const prisma = await getPrisma();
  const store = sharedSagaStore(prisma);
  const reports = await Promise.all([sweepSlas(prisma, { store }), sweepSlas(prisma, { store })]);
  return reports.flatMap((r) => r.expired);
}

async function reviewer(tag: string) {
  const prisma = await getPrisma();
  const user = await createUser(prisma, { email: `${tag}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.com`, name: tag, role: "reviewer", password: "correct horse battery", by: { type: "system", id: "test" } });
  const sessionId = await startUserSession(prisma, user.id);
  return { user, sessionId, as: <T>(fn: (actor: CurrentUser) => Promise<T>) => runWithSessionReader(async () => ({ userId: user.id, sessionId }), async () => fn(await requireUser("read"))) };
}

/** Runs `trials` of one fault and records its line; `trial` returns its run ids. */
async function fault(name: string, trial: (n: number) => Promise<string[]>): Promise<void> {
  const from = world.ledger.operations().length;
  const runIds: string[] = [];
  for (let t = 0; t < MATRIX_TRIALS; t++) runIds.push(...(await trial(t)));
  const { figures, escalations } = await figuresFor(sharedSagaStore(await getPrisma()), world.ledger.operations().slice(from), runIds);
  const line = matrixLine({ name: `approval-unavailable:${name}`, trials: MATRIX_TRIALS, figures, escalated: escalations.length });
  recordMatrixLine(line);
  expect(figures.violations, line).toEqual([]);
  expect(figures.unapprovedIrreversible, line).toBe(0);
}

describe("approval unavailable", () => {
  it("pivot-expired: nobody decides; the SLA rejects it once, never approves; the agent hears why; nothing irreversible runs; the run unwinds or waits", async () => {
    const store = sharedSagaStore(await getPrisma());
    await fault("pivot-expired", async (t) => {
      const n = 100 + t;
      const before = sends();
      const { run, pivot } = await waitingRun(n);
      // Before the expiry the sweep leaves it alone: only silence past the SLA rejects.
      expect(await sweepTwice()).not.toContain(pivot.id);
      await backdate(await getPrisma(), { pivotId: pivot.id }, await pastPivotExpiry());
      expect((await sweepTwice()).filter((id) => id === pivot.id)).toEqual([pivot.id]);

      const heard = await run.awaitPivot(pivot.id, { timeoutMs: 0 });
      expect(heard).toMatchObject({ status: PivotStatus.REJECTED, decidedBy: "sla" });
      expect(heard.reason).toMatch(/^Expired: no reviewer decided within .*never approved/);
      await expect(run.commitPlan(pivot.id)).rejects.toMatchObject({ code: "PIVOT_NOT_APPROVED" });
      expect(await run.call("send_email", email(n))).toMatchObject({ status: "approval_required" });
      expect((await store.getRun(run.runId))?.status).toBe(RunStatus.RUNNING);

      if (t % 2 === 1) {
        const report = await engine.unwind(run.runId, AGENT, "the pivot expired");
        // The email the agent tried on its own was held for a person; the unwind closes it, saying why:
        // the run takes no more calls, so no approval could ever send it.
        const open = await store.listEscalations({ runId: run.runId, status: ["OPEN", "CLAIMED"] });
        expect(open).toEqual([]);
        const closed = (await store.listEscalations({ runId: run.runId })).filter((e) => e.kind === EscalationKind.APPROVAL_REQUIRED);
        expect(closed.map((e) => e.resolution)).toEqual([expect.objectContaining({ approved: false, closedBecause: "run_unwound" })]);
        expect(report.status).toBe(RunStatus.UNWOUND);
        expect(report.compensationFailed.length + report.unresolved.length).toBe(0);
        expect(world.ledger.effects({ op: "email.deleteDraft" }).length).toBeGreaterThan(0);
      } else {
        const again = await run.requestPivot({ summary: `Email Bo about order ${n} (asked again).`, plan: [{ tool: "send_email", args: email(n) }] });
        expect(again.id).not.toBe(pivot.id);
        expect((await store.getPivot(again.id))?.status).toBe(PivotStatus.PENDING);
      }
      expect(sends() - before, "an expired pivot sends nothing").toBe(0);
      return [run.runId];
    });
  });

  it("held-call-expired: an irreversible call nobody approves is rejected at expiry, never run; the agent's next call is refused with why", async () => {
    const prisma = await getPrisma();
    await fault("held-call-expired", async (t) => {
      const n = 200 + t;
      const before = sends();
      const run = await engine.startRun({ title: `held call ${n}`, agent: AGENT.id });
      const held = await run.call("send_email", email(n));
      expect(held).toMatchObject({ status: "approval_required", escalationId: expect.stringMatching(/^esc_/) });
      const escalationId = held.status === "approval_required" ? held.escalationId! : "";
      const policy = escalationSla(await loadSlaRules(prisma), EscalationKind.APPROVAL_REQUIRED, "send_email");
      expect(policy.expireSec, "held calls expire by default").not.toBeNull();
      await backdate(prisma, { escalationId }, policy.expireSec! + 60);
      expect((await sweepTwice()).filter((id) => id === escalationId)).toEqual([escalationId]);

      const row = await prisma.escalation.findUniqueOrThrow({ where: { id: escalationId } });
      expect(row).toMatchObject({ status: "RESOLVED", resolvedBy: "sla" });
      expect(row.resolution).toMatchObject({ approved: false, expired: true });
      const again = await (await engine.resume(run.runId)).call("send_email", email(n));
      expect(again).toMatchObject({ status: "approval_required", reason: "REJECTED" });
      expect(again.status === "approval_required" ? again.message : "").toMatch(/Expired/);
      expect(await prisma.step.count({ where: { runId: run.runId, tool: "send_email" } })).toBe(0);
      expect(sends() - before).toBe(0);
      if (t % 2 === 1) expect((await engine.unwind(run.runId, AGENT, "held call expired")).status).toBe(RunStatus.UNWOUND);
      return [run.runId];
    });
  });

  it("approved-after-expiry: a reviewer approves a pivot or a held call past its expiry before any sweep ran: told it was already decided (rejected by its SLA), nothing runs", async () => {
    const prisma = await getPrisma();
    await fault("approved-after-expiry", async (t) => {
      const n = 250 + t;
      const before = sends();
      const r = await reviewer(`late-${n}`);
      // A pivot: no sweep has run since it expired (a deployment without a notifier, or between rounds).
      const { run, pivot } = await waitingRun(n);
      await backdate(prisma, { pivotId: pivot.id }, await pastPivotExpiry());
      const answer = await r.as((actor) => approvePivot({ actor, pivotId: pivot.id, planHash: pivot.planHash }));
      expect(answer).toMatchObject({ ok: false, reason: "already_decided", pivot: { status: PivotStatus.REJECTED, decidedBy: "sla" } });
      await expect(run.commitPlan(pivot.id)).rejects.toMatchObject({ code: "PIVOT_NOT_APPROVED" });
      // A held call, approved from the queue past its expiry.
      const held = await run.call("send_email", email(n + 1000));
      const escalationId = held.status === "approval_required" ? held.escalationId! : "";
      const policy = escalationSla(await loadSlaRules(prisma), EscalationKind.APPROVAL_REQUIRED, "send_email");
      await backdate(prisma, { escalationId }, policy.expireSec! + 60);
      const bulk = await r.as((actor) => decideHeldCalls({ actor, escalationIds: [escalationId], approve: true }));
      expect(bulk.items).toEqual([expect.objectContaining({ escalationId, outcome: "skipped" })]);
      expect(await prisma.escalation.findUniqueOrThrow({ where: { id: escalationId } })).toMatchObject({ status: "RESOLVED", resolvedBy: "sla" });
      expect(await run.call("send_email", email(n + 1000))).toMatchObject({ status: "approval_required", reason: "REJECTED" });
      expect(sends() - before, "nothing approved after its expiry runs").toBe(0);
      return [run.runId];
    });
  });

  it("two-reviewers: two decisions at once; one wins, the other is told; the plan runs as the winner decided, once", async () => {
    const store = sharedSagaStore(await getPrisma());
    await fault("two-reviewers", async (t) => {
      const n = 300 + t;
      const before = sends();
      const { run, pivot } = await waitingRun(n);
      const [a, b] = [await reviewer("ann"), await reviewer("ben")];
      const bothApprove = t % 2 === 1;
      const [first, second] = await Promise.all([
        a.as((actor) => approvePivot({ actor, pivotId: pivot.id, planHash: pivot.planHash })),
        b.as((actor) =>
          bothApprove ? approvePivot({ actor, pivotId: pivot.id, planHash: pivot.planHash }) : rejectPivot({ actor, pivotId: pivot.id, planHash: pivot.planHash, reason: "not this email" }),
        ),
      ]);
      const winners = [first, second].filter((r) => r.ok);
      expect(winners, JSON.stringify([first, second])).toHaveLength(1);
      const loser = [first, second].find((r) => !r.ok)!;
      expect(loser).toMatchObject({ ok: false });
      expect(loser.ok === false ? loser.reason : "").toMatch(/^(already_decided|run_not_waiting)$/);

      const decided = (await store.getPivot(pivot.id))!;
      const events = await (await getPrisma()).auditEvent.count({ where: { runId: run.runId, type: { in: ["pivot.approved", "pivot.rejected"] } } });
      expect(events, "one decision recorded").toBe(1);
      if (decided.status === PivotStatus.APPROVED) {
        expect((await run.commitPlan(pivot.id)).status).toBe("committed");
        // Whoever commits again is answered from the log.
        expect((await (await engine.resume(run.runId)).commitPlan(pivot.id)).status).toBe("already_committed");
        expect(sends() - before, "approved: the email is sent once").toBe(1);
      } else {
        expect(decided.status).toBe(PivotStatus.REJECTED);
        await expect(run.commitPlan(pivot.id)).rejects.toBeInstanceOf(SagaError);
        expect((await engine.unwind(run.runId, AGENT, "rejected")).status).toBe(RunStatus.UNWOUND);
        expect(sends() - before, "rejected: nothing is sent").toBe(0);
      }
      return [run.runId];
    });
  });

  it("two-reviewers-held-call: two decisions on one held call at once; one wins, the other is told who decided", async () => {
    const prisma = await getPrisma();
    await fault("two-reviewers-held-call", async (t) => {
      const n = 500 + t;
      const before = sends();
      const run = await engine.startRun({ title: `held call, two reviewers ${n}`, agent: AGENT.id });
      const held = await run.call("send_email", email(n));
      const escalationId = held.status === "approval_required" ? held.escalationId! : "";
      expect(escalationId).toMatch(/^esc_/);
      const [a, b] = [await reviewer("dan"), await reviewer("eve")];
      const results = await Promise.all([
        a.as((actor) => decideHeldCalls({ actor, escalationIds: [escalationId], approve: true })),
        b.as((actor) => decideHeldCalls({ actor, escalationIds: [escalationId], approve: false, note: "not this email" })),
      ]);
      expect(results.map((r) => r.decided).sort(), JSON.stringify(results)).toEqual([0, 1]);
      const loser = results.find((r) => r.decided === 0)!;
      expect(loser.items[0]).toMatchObject({ outcome: "skipped", message: expect.stringMatching(/^(already decided by|held by) /) });
      const row = await prisma.escalation.findUniqueOrThrow({ where: { id: escalationId } });
      const approved = (row.resolution as { approved?: unknown } | null)?.approved === true;
      const again = await (await engine.resume(run.runId)).call("send_email", email(n));
      if (approved) {
        expect(again).toMatchObject({ status: "ok" });
        expect(await (await engine.resume(run.runId)).call("send_email", email(n))).toMatchObject({ status: "ok", replayed: true });
        expect(sends() - before, "approved: sent once").toBe(1);
      } else {
        expect(again).toMatchObject({ status: "approval_required", reason: "REJECTED" });
        expect(sends() - before, "rejected: nothing sent").toBe(0);
      }
      return [run.runId];
    });
  });

  it("session-ended: a reviewer whose session ended between opening and approving is refused; the pivot stays pending, then expires", async () => {
    const prisma = await getPrisma();
    const store = sharedSagaStore(prisma);
    await fault("session-ended", async (t) => {
      const n = 400 + t;
      const before = sends();
      const { run, pivot } = await waitingRun(n);
      const r = await reviewer("cat");
      const screen = await r.as((actor) => getPivotScreen({ actor, pivotId: pivot.id }));
      expect(screen).toBeTruthy();
      await endAllUserSessions(prisma, r.user.id, "signed_out_everywhere", { type: "user", id: r.user.id });
      const refused = await r.as((actor) => approvePivot({ actor, pivotId: pivot.id, planHash: pivot.planHash })).then(
        () => null,
        (e: unknown) => e,
      );
      expect(refused).toBeInstanceOf(ApiError);
      expect((refused as ApiError).code).toBe("UNAUTHORIZED");
      expect((await store.getPivot(pivot.id))?.status).toBe(PivotStatus.PENDING);

      await backdate(prisma, { pivotId: pivot.id }, await pastPivotExpiry());
      expect(await sweepTwice()).toContain(pivot.id);
      expect((await store.getPivot(pivot.id))?.status).toBe(PivotStatus.REJECTED);
      expect((await engine.unwind(run.runId, AGENT, "nobody could decide")).status).toBe(RunStatus.UNWOUND);
      const steps = await store.listSteps(run.runId);
      expect(steps.map((s) => s.status)).toEqual([StepStatus.COMPENSATED]);
      expect(sends() - before).toBe(0);
      return [run.runId];
    });
  });
});
