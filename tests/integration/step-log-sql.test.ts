/**
 * The saga log's hot path (lib/core/db/step-log-sql.ts, the driver's own SQL): the rows and audit links it
 * writes read back through Prisma as the memory store (the reference the contract suite holds every
 * store to) records them; chains written by it, by Prisma transactions (run status changes) and by
 * two stores whose cached chain heads go stale stay unbroken. (That relaxed durability flushes one
 * commit per call instead of two is measured by `npm run bench`, in its durable-commits section, from
 * pg_stat_wal.wal_sync: a cluster-wide counter that suites running in parallel would disturb.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPrisma, type PrismaClient } from "@/lib/core/db/prisma";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { rawDriverOf } from "@/lib/core/db/raw-driver";
import { auditHash, compensationKey, stepKey } from "@/packages/client/src/saga/keys";
import { MemorySagaStore } from "@/packages/client/src/saga/memory-store";
import { auditHashedContent, GENESIS_HASH, IntentGuardFailed, type AuditEventRecord, type NewIntent, type SagaStore, type StepRecord } from "@/packages/client/src/saga/store";
import { reserveTestDatabase, testPostgresPoolerUrl } from "../support/test-database";

const database = reserveTestDatabase("steplog");
let prisma: PrismaClient;
let hot: PrismaSagaStore;
/** Write transactions the client committed (its observer counts them). */
const sent = { commits: 0 };
let n = 0;

beforeAll(async () => {
  await database.create();
  prisma = await openPrisma(database.url, { observer: { commit: () => sent.commits++ } });
  hot = new PrismaSagaStore(prisma);
});

afterAll(async () => {
  await prisma?.$disconnect();
  await database.drop();
});

const actor = { type: "agent" as const, id: "steplog" };

async function newRun(store: SagaStore): Promise<string> {
  const id = `run_steplog_${++n}_${Date.now()}`;
  await store.createRun({ id, title: "t", agent: "steplog", onBehalfOf: null, metadata: {} }, { type: "run.started", actor });
  return id;
}

function intent(runId: string, stepIdx: number): NewIntent {
  const tool = "charge_card";
  const key = stepKey(runId, stepIdx, tool);
  return {
    id: `stp_${runId}_${stepIdx}`,
    runId,
    stepIdx,
    tool,
    toolClass: "COMPENSATABLE",
    stepKey: key,
    args: { amount: 1250, note: null, nested: { list: [1, "two", { three: true }] }, unicode: "Zoë ✓" },
    argsHash: "h",
    phase: "STAGING",
    policyVersion: 2,
    approvalId: null,
    planItemIdx: null,
    compensation: { tool: "refund", args: { key } },
    compensationKey: compensationKey(runId, stepIdx, tool),
    correction: { audience: ["customer"], subject: "s", body: "b" },
    audience: ["customer"],
  };
}

/** A step's life through one store: intent, outcome, compensation requested, compensated. */
async function lifeOf(store: SagaStore, runId: string, stepIdx: number): Promise<StepRecord> {
  const { step } = await store.insertIntent(intent(runId, stepIdx), { type: "step.intended", actor, data: { stepIdx } });
  await store.updateStep(step.id, { status: ["INTENDED"] }, { status: "CONFIRMED", externalRef: "ch_1", result: { id: "ch_1", cents: [1, 2] }, error: null, attempts: 1 }, { type: "step.confirmed", actor });
  const at = new Date("2026-11-29T10:00:00.123Z");
  await store.updateStep(step.id, { status: ["CONFIRMED"], compensationState: ["NONE"] }, { compensationState: "REQUESTED", compensationRequestedAt: at }, { type: "compensation.requested", actor });
  const done = await store.updateStep(
    step.id,
    { status: ["CONFIRMED"], compensationState: ["REQUESTED"] },
    { status: "COMPENSATED", compensationState: "CONFIRMED", compensationRef: "re_1", compensationConfirmedAt: at },
    { type: "compensation.confirmed", actor, data: { ref: "re_1" } },
  );
  expect(done).not.toBeNull();
  return (await store.getStep(step.id))!;
}

function comparable(step: StepRecord): Partial<StepRecord> {
  const { id: _id, runId: _runId, stepKey: _k, compensationKey: _ck, createdAt: _c, updatedAt: _u, compensation: _comp, ...rest } = step;
  return rest;
}

function chainProblems(events: readonly AuditEventRecord[]): string[] {
  const problems: string[] = [];
  events.forEach((e, i) => {
    if (e.seq !== i + 1) problems.push(`event ${i}: seq ${e.seq}`);
    if (e.prevHash !== (i === 0 ? GENESIS_HASH : events[i - 1]!.hash)) problems.push(`event ${i}: prevHash does not link`);
    if (auditHash(e.prevHash, auditHashedContent(e)) !== e.hash) problems.push(`event ${i} (${e.type}): hash does not match`);
  });
  return problems;
}

describe(`the hot write path on ${database.kind}`, () => {
  it("writes the rows and audit events the memory store records, read back through Prisma", async () => {
    const memory = new MemorySagaStore();
    const [a, b] = [await newRun(hot), await newRun(memory)];
    const before = sent.commits;
    const viaHot = await lifeOf(hot, a, 0);
    expect(sent.commits - before).toBe(4); // one transaction per write
    const reference = await lifeOf(memory, b, 0);
    expect(comparable(viaHot)).toEqual(comparable(reference));
    expect(viaHot.compensation).toEqual({ tool: "refund", args: { key: viaHot.stepKey } });
    expect(viaHot.createdAt.getTime()).toBeLessThanOrEqual(viaHot.updatedAt.getTime());
    const [ea, eb] = [await hot.listAuditEvents(a), await memory.listAuditEvents(b)];
    expect(ea.map((e) => [e.type, e.actor, e.data])).toEqual(eb.map((e) => [e.type, e.actor, e.data]));
    expect(chainProblems(ea)).toEqual([]);
    // The hot path's clock is the database's (within a minute of this process's).
    expect(Math.abs(ea.at(-1)!.at.getTime() - Date.now())).toBeLessThan(60_000);
  });

  it("starts a run as the memory store does, in one transaction; a taken id is a conflict", async () => {
    const memory = new MemorySagaStore();
    const before = sent.commits;
    const [a, b] = [await newRun(hot), await newRun(memory)];
    expect(sent.commits - before).toBe(1);
    const [ra, rb] = [(await hot.getRun(a))!, (await memory.getRun(b))!];
    const { id: _a, createdAt: ca, updatedAt: ua, ...restA } = ra;
    const { id: _b, createdAt: _cb, updatedAt: _ub, ...restB } = rb;
    expect(restA).toEqual(restB);
    expect(ca.getTime()).toBe(ua.getTime());
    const [ea, eb] = [await hot.listAuditEvents(a), await memory.listAuditEvents(b)];
    expect(ea.map((e) => [e.seq, e.type, e.actor, e.data, e.stepId])).toEqual(eb.map((e) => [e.seq, e.type, e.actor, e.data, e.stepId]));
    expect(chainProblems(ea)).toEqual([]);
    {
      const store = hot;
      await expect(store.createRun({ id: a, title: "again", agent: "steplog", onBehalfOf: null, metadata: {} }, { type: "run.started", actor })).rejects.toMatchObject({ code: "CONFLICT" });
    }
    expect(await hot.listAuditEvents(a)).toHaveLength(1); // nothing written by the refused starts
  });

  it("a run whose chain already has links (written before the run existed) starts after them, chain unbroken", async () => {
    const id = `run_steplog_orphan_${Date.now()}`;
    const at = new Date();
    const content = { seq: 1, scope: `run:${id}`, runId: id, stepId: null, type: "note", actor: "system:test", data: { early: true }, at };
    await prisma.auditEvent.create({ data: { ...content, prevHash: GENESIS_HASH, hash: auditHash(GENESIS_HASH, auditHashedContent(content)) } });
    await hot.createRun({ id, title: "t", agent: "steplog", onBehalfOf: null, metadata: {} }, { type: "run.started", actor });
    const events = await hot.listAuditEvents(id);
    expect(events.map((e) => e.type)).toEqual(["note", "run.started"]);
    expect(chainProblems(events)).toEqual([]);
    await lifeOf(hot, id, 0); // and the hot path's cached head is the right one
    expect(chainProblems(await hot.listAuditEvents(id))).toEqual([]);
  });

  it("an activeToken guard or fence holds only while the token exists unrevoked; a miss writes nothing", async () => {
    const tokenId = `tok_steplog_${Date.now()}`;
    await prisma.agentToken.create({ data: { id: tokenId, name: tokenId, tokenHash: `h_${tokenId}`, prefix: "sgb_x", tools: ["charge_card"], createdBy: "test" } });
    const guard = { runStatus: ["RUNNING"] as const, activeToken: tokenId };
    {
      const store = hot;
      const runId = await newRun(store);
      await expect(store.insertIntent(intent(runId, 0), { type: "step.intended", actor }, { ...guard, activeToken: "tok_nobody" })).rejects.toBeInstanceOf(IntentGuardFailed);
      const { step } = await store.insertIntent(intent(runId, 0), { type: "step.intended", actor }, guard);
      expect(await store.updateStep(step.id, { status: ["INTENDED"], activeToken: "tok_nobody" }, { status: "CONFIRMED" }, { type: "step.confirmed", actor })).toBeNull();
      expect(await store.updateStep(step.id, { status: ["INTENDED"], activeToken: tokenId }, { status: "UNKNOWN" }, { type: "step.unknown", actor })).toMatchObject({ status: "UNKNOWN" });
      await prisma.agentToken.update({ where: { id: tokenId }, data: { revokedAt: new Date() } });
      expect(await store.updateStep(step.id, { status: ["UNKNOWN"], activeToken: tokenId }, { status: "CONFIRMED" }, { type: "step.confirmed", actor })).toBeNull();
      await expect(store.insertIntent(intent(runId, 1), { type: "step.intended", actor }, guard)).rejects.toBeInstanceOf(IntentGuardFailed);
      expect((await hot.listSteps(runId)).map((s) => s.status)).toEqual(["UNKNOWN"]);
      expect((await hot.listAuditEvents(runId)).map((e) => e.type)).toEqual(["run.started", "step.intended", "step.unknown"]);
      await prisma.agentToken.update({ where: { id: tokenId }, data: { revokedAt: null } });
    }
  });

  it("a runAgent guard or fence holds only for the run's own agent; a miss writes nothing", async () => {
    {
      const store = hot;
      const runId = await newRun(store); // agent "steplog"
      await expect(store.insertIntent(intent(runId, 0), { type: "step.intended", actor }, { runStatus: ["RUNNING"], runAgent: "someone-else" })).rejects.toBeInstanceOf(IntentGuardFailed);
      const { step } = await store.insertIntent(intent(runId, 0), { type: "step.intended", actor }, { runStatus: ["RUNNING"], runAgent: "steplog" });
      expect(await store.updateStep(step.id, { status: ["INTENDED"], runAgent: "someone-else" }, { status: "CONFIRMED" }, { type: "step.confirmed", actor })).toBeNull();
      expect(await store.updateStep(step.id, { status: ["INTENDED"], runAgent: "steplog" }, { status: "CONFIRMED" }, { type: "step.confirmed", actor })).toMatchObject({ status: "CONFIRMED" });
      expect((await hot.listAuditEvents(runId)).map((e) => e.type)).toEqual(["run.started", "step.intended", "step.confirmed"]);
    }
  });

  // Behind a transaction pooler the statements go unnamed (parsed and planned per call): nothing to settle.
  it.runIf(database.kind === "postgresql" && !testPostgresPoolerUrl())("settles on one generic plan per statement, and those plans look rows up by index, never a hashed scan of a table", async () => {
    // One connection, so that the statements run and the ones inspected are the same session's.
    const previous = process.env.DATABASE_POOL_SIZE;
    process.env.DATABASE_POOL_SIZE = "1";
    const single = await openPrisma(database.url).finally(() => {
      if (previous === undefined) delete process.env.DATABASE_POOL_SIZE;
      else process.env.DATABASE_POOL_SIZE = previous;
    });
    try {
      const store = new PrismaSagaStore(single);
      const tokenId = `tok_plan_${Date.now()}`;
      await single.agentToken.create({ data: { id: tokenId, name: tokenId, tokenHash: `h_${tokenId}`, prefix: "sgb_x", tools: ["charge_card"], createdBy: "test" } });
      const policy = { name: `plan_tool_${Date.now()}`, toolClass: "COMPENSATABLE", policyVersion: 2 };
      await single.toolPolicy.create({ data: { ...policy, compensator: "refund", updatedBy: "test" } });
      // Past PostgreSQL's five trial plans, with every guard and fence the API uses: 12 first steps, 24 later ones.
      for (let r = 0; r < 12; r++) {
        const runId = await newRun(store);
        for (let i = 0; i < 3; i++) {
          const guard = { runStatus: ["RUNNING"] as const, appendOnly: true, noPivot: true, runAgent: "steplog", activeToken: tokenId, toolPolicy: policy };
          const { step } = await store.insertIntent(intent(runId, i), { type: "step.intended", actor }, guard);
          await store.updateStep(step.id, { status: ["INTENDED"], runAgent: "steplog", activeToken: tokenId }, { status: "CONFIRMED" }, { type: "step.confirmed", actor });
        }
      }
      const driver = rawDriverOf(single);
      if (driver?.kind !== "postgresql") throw new Error("expected the PostgreSQL hot path");
      const { rows } = await driver.pool.query<{ name: string; statement: string; generic_plans: string; custom_plans: string; types: string[] }>(
        `SELECT name, statement, generic_plans, custom_plans, parameter_types::text[] AS types FROM pg_prepared_statements WHERE name LIKE 'sb\\_%'`,
      );
      // Planned at every call would be custom_plans growing past the five trials.
      expect(rows.filter((r) => Number(r.custom_plans) > 5).map((r) => `${r.custom_plans} custom plans: ${r.statement.slice(0, 120)}`)).toEqual([]);
      const inserts = rows.filter((r) => r.statement.includes(`INSERT INTO "Step"`));
      const guardedUpdate = rows.find((r) => r.statement.includes(`UPDATE "Step"`) && r.statement.includes(`r."agent"`));
      expect(inserts.map((r) => Number(r.generic_plans) > 0)).toEqual([true, true]); // the first step's shape, and the others'
      expect(Number(guardedUpdate?.generic_plans)).toBeGreaterThan(0);
      // The generic plans as cached; a seq scan only where no index could serve (on these small
      // tables the planner may rightly prefer one).
      await driver.pool.query("SET plan_cache_mode = force_generic_plan");
      await driver.pool.query("SET enable_seqscan = off");
      for (const r of [...inserts, guardedUpdate!]) {
        const plan = (await driver.pool.query<{ "QUERY PLAN": string }>(`EXPLAIN EXECUTE ${r.name}(${r.types.map(() => "NULL").join(",")})`)).rows.map((x) => x["QUERY PLAN"]).join("\n");
        expect(plan).not.toMatch(/hashed SubPlan/);
        expect(plan).not.toMatch(/Seq Scan on "(Step|Pivot|Run)"/);
      }
    } finally {
      await single.$disconnect();
    }
  });

  it("one chain written by the hot path, by Prisma transactions and by two stores with stale cached heads stays one unbroken chain", async () => {
    const otherClient = await openPrisma(database.url);
    const other = new PrismaSagaStore(otherClient); // its own client, its own caches
    try {
      const runId = await newRun(hot);
      const writers = [hot, other, hot];
      for (let i = 0; i < 9; i++) {
        const store = writers[i % writers.length]!;
        await store.insertIntent(intent(runId, i), { type: "step.intended", actor, data: { i } });
        const step = (await hot.listSteps(runId)).find((s) => s.stepIdx === i)!;
        await writers[(i + 1) % writers.length]!.updateStep(step.id, { status: ["INTENDED"] }, { status: "CONFIRMED" }, { type: "step.confirmed", actor });
        // A Prisma transaction's append between the hot path's: the other store's cached head goes stale.
        if (i % 3 === 2) await hot.setRunStatus(runId, null, "RUNNING", { type: "run.noted", actor });
      }
      const events = await hot.listAuditEvents(runId);
      expect(events).toHaveLength(1 + 18 + 3);
      expect(chainProblems(events)).toEqual([]);
    } finally {
      await otherClient.$disconnect();
    }
  });

  it("a toolPolicy guard holds only while the tool table row has that class and version", async () => {
    await prisma.toolPolicy.upsert({
      where: { name: "charge_card" },
      create: { name: "charge_card", toolClass: "COMPENSATABLE", compensator: "refund", policyVersion: 4 },
      update: { toolClass: "COMPENSATABLE", policyVersion: 4 },
    });
    {
      const store = hot;
      const runId = await newRun(store);
      const guard = (policyVersion: number) => ({ runStatus: ["RUNNING"] as const, toolPolicy: { name: "charge_card", toolClass: "COMPENSATABLE", policyVersion } });
      await expect(store.insertIntent(intent(runId, 0), { type: "step.intended", actor }, guard(3))).rejects.toBeInstanceOf(IntentGuardFailed);
      expect((await store.insertIntent(intent(runId, 0), { type: "step.intended", actor }, guard(4))).created).toBe(true);
    }
  });

  it("40 concurrent transitions on 40 runs and 40 on one run commit once each, chains intact", async () => {
    const runs = await Promise.all(Array.from({ length: 40 }, () => newRun(hot)));
    await Promise.all(runs.map((r) => hot.insertIntent(intent(r, 0), { type: "step.intended", actor })));
    const shared = runs[0]!;
    const extra = await Promise.all(Array.from({ length: 40 }, (_, i) => hot.insertIntent(intent(shared, i + 1), { type: "step.intended", actor })));
    expect(extra.every((r) => r.created)).toBe(true);
    for (const r of runs) expect(chainProblems(await hot.listAuditEvents(r))).toEqual([]);
    expect(await hot.listAuditEvents(shared)).toHaveLength(1 + 41);
  });
});
