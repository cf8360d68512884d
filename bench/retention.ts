/**
 * `npx tsx bench/retention.ts [--runs N] [--store sqlite|postgresql] [--keep]`: retention at scale.
 * Fills a throwaway database with N settled runs (default 100,000) past a 30-day retention, each with
 * two confirmed steps and their six audit links in valid hash chains, plus a tenth as many recent
 * runs inside the window; then runs one retention pass (lib/server/retention/archive-settled-runs.ts)
 * and measures: the pass's time, the archive's size, verifying the archive offline, whole-log
 * verification afterwards, the hot database's size before and after (SQLite: after VACUUM, since
 * freed pages are reused but not returned), and that the recent runs' rows are byte for byte as
 * before. Writes bench/results/<timestamp>-retention.json. Not part of `npm test`.
 */
import { statSync } from "node:fs";
import { performance } from "node:perf_hooks";
import type { Prisma, PrismaClient } from "@/generated/prisma";
import { chainLink, type ChainHead } from "@/lib/core/db/audit-chain";
import { openPrisma, useProcessPrisma } from "@/lib/core/db/prisma";
import type { DatabaseKind } from "@/lib/core/db/url";
import { verifyArchiveFile } from "@/lib/core/archive/archive-file";
import { verifyAuditChains } from "@/lib/desks/audit/verify-audit-chains";
import { archiveSettledRuns } from "@/lib/server/retention/archive-settled-runs";
import { setDefaultRetention } from "@/lib/server/retention/retention-policy";
import { stepKey } from "@/packages/client/src/saga/keys";
import { fileOf, flag, hasFlag, throwaway, writeResults } from "./lib/common";

const DAY = 86_400_000;
const CHUNK = 500;
const kind: DatabaseKind = process.argv.includes("postgresql") ? "postgresql" : "sqlite";
const runs = flag("runs", 100_000);
const recent = Math.max(1, Math.floor(runs / 10));

async function fill(prisma: PrismaClient, count: number, ageDays: number, prefix: string): Promise<void> {
  const at = new Date(Date.now() - ageDays * DAY);
  for (let start = 0; start < count; start += CHUNK) {
    const runRows: Prisma.RunCreateManyInput[] = [];
    const stepRows: Prisma.StepCreateManyInput[] = [];
    const events: Prisma.AuditEventCreateManyInput[] = [];
    for (let i = start; i < Math.min(count, start + CHUNK); i++) {
      const runId = `run_${prefix}${i.toString(36).padStart(6, "0")}`;
      runRows.push({ id: runId, title: `Refund order ${i}`, agent: "bench-agent", onBehalfOf: null, metadata: {}, status: "COMPLETED", createdAt: at, updatedAt: at });
      const scope = `run:${runId}`;
      let head: ChainHead | undefined;
      const link = (type: string, stepId: string | null, data: Record<string, unknown>) => {
        const row = chainLink(head, { scope, runId, stepId, type, actor: "token:bench-agent", data: data as never }, at);
        head = { seq: row.seq, hash: row.hash };
        events.push({ ...row, data: data as Prisma.InputJsonValue });
      };
      link("run.started", null, { title: `Refund order ${i}` });
      for (let s = 0; s < 2; s++) {
        const stepId = `stp_${prefix}${i.toString(36).padStart(6, "0")}${s}`;
        stepRows.push({ id: stepId, runId, stepIdx: s, tool: "bench_noop", toolClass: "REVERSIBLE", stepKey: stepKey(runId, s, "bench_noop"), args: { order: i, amount: 1200 + s }, argsHash: "h", status: "CONFIRMED", phase: "STAGING", policyVersion: 1, externalRef: `ref_${i}_${s}`, result: { ok: true }, compensation: { tool: "bench_undo", args: {} }, audience: ["internal"], createdAt: at, updatedAt: at });
        link("step.intended", stepId, { stepIdx: s, tool: "bench_noop" });
        link("step.confirmed", stepId, { stepIdx: s, externalRef: `ref_${i}_${s}` });
      }
      link("run.completed", null, {});
    }
    await prisma.$transaction([prisma.run.createMany({ data: runRows }), prisma.step.createMany({ data: stepRows }), prisma.auditEvent.createMany({ data: events })]);
  }
}

function sqliteBytes(url: string): number {
  const file = fileOf(url);
  return [file, `${file}-wal`].reduce((n, f) => {
    try {
      return n + statSync(f).size;
    } catch {
      return n;
    }
  }, 0);
}

async function databaseBytes(prisma: PrismaClient, url: string): Promise<number> {
  if (kind === "sqlite") return sqliteBytes(url);
  const [row] = await prisma.$queryRawUnsafe<{ n: bigint }[]>("SELECT pg_database_size(current_database()) AS n");
  return Number(row!.n);
}

async function main(): Promise<void> {
  const db = await throwaway(kind, "retention");
  process.env.DATABASE_URL = db.url;
  const prisma = await openPrisma(db.url);
  // The audit desk's verification reads through the process's client: this one.
  useProcessPrisma(Promise.resolve(prisma));
  try {
    const t0 = performance.now();
    await fill(prisma, runs, 60, "old");
    await fill(prisma, recent, 1, "new");
    const fillSec = (performance.now() - t0) / 1000;
    await setDefaultRetention(prisma, { seconds: 30 * 86_400, actor: { type: "system", id: "bench" } });
    const recentBefore = JSON.stringify(await prisma.step.findMany({ where: { runId: { startsWith: "run_new" } }, orderBy: { id: "asc" } }));
    if (kind === "sqlite") await prisma.$executeRawUnsafe("PRAGMA wal_checkpoint(TRUNCATE)");
    const before = await databaseBytes(prisma, db.url);

    const dry = await archiveSettledRuns(prisma, { dryRun: true, maxRuns: runs }, { type: "system", id: "bench" });
    const pass = await archiveSettledRuns(prisma, { maxRuns: runs }, { type: "system", id: "bench" });
    if (!pass.archive) throw new Error(`Nothing was archived: ${pass.message}`);
    const t1 = performance.now();
    const offline = await verifyArchiveFile(pass.archive.file);
    const verifySec = (performance.now() - t1) / 1000;
    if (!offline.ok) throw new Error(`The archive does not verify: ${offline.message}`);
    const whole = await verifyAuditChains({ actor: { id: "usr_bench", email: "bench@example.com", name: "Bench", role: "admin" } });
    const recentAfter = JSON.stringify(await prisma.step.findMany({ where: { runId: { startsWith: "run_new" } }, orderBy: { id: "asc" } }));
    if (kind === "sqlite") await prisma.$executeRawUnsafe("PRAGMA wal_checkpoint(TRUNCATE)");
    const afterDelete = await databaseBytes(prisma, db.url);
    if (kind === "sqlite") await prisma.$executeRawUnsafe("VACUUM");
    else await prisma.$executeRawUnsafe('VACUUM FULL "Run", "Step", "AuditEvent"');
    const afterVacuum = await databaseBytes(prisma, db.url);
    const result = {
      store: kind,
      runs,
      recent,
      fillSec,
      dryRunSec: dry.seconds,
      passSec: pass.seconds,
      archived: pass.archive.runs,
      removed: pass.removed,
      events: pass.archive.events,
      archiveBytes: pass.archive.bytes,
      verifyArchiveSec: verifySec,
      wholeLogVerified: whole.verified,
      wholeLogSec: whole.seconds,
      dbBytesBefore: before,
      dbBytesAfterDelete: afterDelete,
      dbBytesAfterVacuum: afterVacuum,
      recentRunsUnchanged: recentBefore === recentAfter,
    };
    console.log(JSON.stringify(result, null, 2));
    console.log(`wrote ${writeResults("retention", result)}`);
  } finally {
    await prisma.$disconnect();
    if (!hasFlag("keep")) await db.drop();
  }
}

await main();
