/**
 * One retention pass (lib/server/retention/ARCHITECTURE.md): the settled runs older than their
 * retention are written to an archive file (their rows and their audit chains, ended by a signed
 * checkpoint of the chains' heads), the file is verified from disk, and only then are the rows
 * removed from the hot tables, a batch of runs per transaction, each run fenced on its chain's head:
 * a run that changed after it was written to the file (a new audit link) stays. A dry run reads the
 * same candidates and changes nothing (no file, no key, no row). A service: the command line
 * (`npm run retention`), the daily duty and the tests call it with the database and the actor.
 */
import { mkdirSync, statSync, unlinkSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import type { Correction, Prisma, PrismaClient, Step } from "@/generated/prisma";
import { appendAuditLink } from "@/lib/core/db/audit-chain";
import { databaseNow } from "@/lib/core/db/dialect";
import { isUniqueViolation } from "@/lib/core/db/prisma-errors";
import { readOnConnection, writeTransaction } from "@/lib/core/db/transactions";
import { dataDirectory } from "@/lib/core/db/url";
import { ARCHIVE_FORMAT, ArchiveLineType, ArchiveWriter, verifyArchiveFile, type CheckpointHead } from "@/lib/core/archive/archive-file";
import { resolveArchiveSigningKey } from "@/lib/core/archive/signing-key";
import { personalDataVault, type PersonalDataVault } from "@/lib/core/privacy/personal-data-vault";
import { isSealed, sealedKeyId, sealValue } from "@/lib/core/privacy/sealing";
import { randomIds } from "@/packages/client/src/saga/ids";
import { actorLabel, runScope, type Actor } from "@/packages/client/src/saga/store";
import { CompensationState, CorrectionStatus, EscalationStatus, RunStatus, StepStatus, ToolClass, UNSETTLED_STATUSES } from "@/packages/client/src/saga/vocabulary";
import { WorkerTaskStatus } from "@/packages/client/src/protocol/tasks/vocabulary";
import { readRetentionPolicy, runRetentionSec, type RetentionPolicy } from "./retention-policy";

/** The audit chain archive passes are recorded on. */
export const ARCHIVE_SCOPE = "archive";
/** The event a pass appends when it has written and verified a file. */
export const RUNS_ARCHIVED = "runs.archived";
/** The most runs one pass archives unless told otherwise. */
export const DEFAULT_MAX_RUNS = 10_000;
/** Runs read, written and removed per batch (and per removal transaction). */
const BATCH = 200;
/** Settings row that keeps two processes from archiving at once. */
const LEASE_KEY = "retention.lease";
/** A lease older than this is taken over (its holder died). */
const LEASE_MS = 3600_000;

/** What a pass does. */
export interface ArchivePassOptions {
  /** Say what would be archived, change nothing. */
  dryRun?: boolean;
  /** Most runs this pass archives (default 10,000; the next pass takes the rest). */
  maxRuns?: number;
  /** Where the file goes (default SAGABOARD_ARCHIVE_DIR, else `archives/` in the data directory). */
  directory?: string;
}

/** Why a settled, old run is not archived. */
export interface KeptCounts {
  /** A step not settled, a compensation running, or still inside its revocation window. */
  openSteps: number;
  /** An open escalation, a correction not sent or dismissed, or a worker task not finished. */
  openWork: number;
  /** Younger than its own retention (a tool of it keeps longer), or kept for ever (no retention). */
  retention: number;
}

/** What a pass found and did. */
export interface ArchivePassResult {
  /** Whether it was a dry run. */
  dryRun: boolean;
  /** The database clock when it started. */
  at: Date;
  /** Runs due for archiving (at most maxRuns). */
  due: number;
  /** Their steps. */
  steps: number;
  /** Oldest and newest last change among them. */
  oldest: Date | null;
  newest: Date | null;
  /** Old settled runs left in place, by why. */
  kept: KeptCounts;
  /** The file written (null on a dry run or when nothing was due). */
  archive: { id: string; file: string; bytes: number; sha256: string; runs: number; events: number } | null;
  /** Runs removed from the hot tables (a run changed meanwhile stays: fewer than `archive.runs`). */
  removed: number;
  /** Wall time, seconds. */
  seconds: number;
  /** What happened, in words. */
  message: string;
}

/** Where archive files go for this environment. */
export function archiveDirectory(env: NodeJS.ProcessEnv = process.env): string {
  return env.SAGABOARD_ARCHIVE_DIR?.trim() || path.join(dataDirectory(env.DATABASE_URL), "archives");
}

interface Candidate {
  id: string;
  steps: number;
  lastChange: Date;
}

/** The settled runs due for archiving at `now`, up to `max`, and what was kept and why. */
async function dueRuns(prisma: PrismaClient, policy: RetentionPolicy, now: Date, max: number): Promise<{ due: Candidate[]; kept: KeptCounts }> {
  const kept: KeptCounts = { openSteps: 0, openWork: 0, retention: 0 };
  const due: Candidate[] = [];
  const shortest = Math.min(...[policy.defaultSec, ...policy.toolSec.values()].filter((s): s is number => s !== null));
  if (!Number.isFinite(shortest)) return { due, kept };
  const cutoff = new Date(now.getTime() - shortest * 1000);
  const windows = new Map((await readOnConnection(prisma, (db) => db.toolPolicy.findMany({ select: { name: true, revocationWindowSec: true } }))).map((t) => [t.name, t.revocationWindowSec]));
  let after = "";
  while (due.length < max) {
    const runs = await readOnConnection(prisma, (db) =>
      db.run.findMany({
        where: { status: { in: [RunStatus.COMPLETED, RunStatus.UNWOUND] }, updatedAt: { lt: cutoff }, id: { gt: after } },
        orderBy: { id: "asc" },
        take: BATCH,
        select: {
          id: true,
          updatedAt: true,
          steps: { select: { tool: true, toolClass: true, status: true, compensationState: true, updatedAt: true } },
          escalations: { where: { status: { not: EscalationStatus.RESOLVED } }, select: { id: true }, take: 1 },
          corrections: { where: { status: { in: [CorrectionStatus.DRAFT, CorrectionStatus.SENDING] } }, select: { id: true }, take: 1 },
        },
      }),
    );
    if (runs.length === 0) break;
    after = runs.at(-1)!.id;
    const busy = new Set(
      (await readOnConnection(prisma, (db) => db.workerTask.findMany({ where: { runId: { in: runs.map((r) => r.id) }, status: { in: [WorkerTaskStatus.PENDING, WorkerTaskStatus.CLAIMED] } }, select: { runId: true } }))).map((t) => t.runId),
    );
    for (const run of runs) {
      const open = run.steps.some((s) => {
        if ((UNSETTLED_STATUSES as readonly string[]).includes(s.status) || s.compensationState === CompensationState.REQUESTED) return true;
        const releasable = s.toolClass === ToolClass.REVERSIBLE || s.toolClass === ToolClass.COMPENSATABLE;
        const window = windows.get(s.tool);
        return s.status === StepStatus.CONFIRMED && releasable && s.compensationState === CompensationState.NONE && !!window && s.updatedAt.getTime() + window * 1000 > now.getTime();
      });
      if (open) {
        kept.openSteps++;
        continue;
      }
      if (run.escalations.length > 0 || run.corrections.length > 0 || busy.has(run.id)) {
        kept.openWork++;
        continue;
      }
      const retention = runRetentionSec(policy, new Set(run.steps.map((s) => s.tool)));
      const lastChange = new Date(Math.max(run.updatedAt.getTime(), ...run.steps.map((s) => s.updatedAt.getTime())));
      if (retention === null || lastChange.getTime() + retention * 1000 > now.getTime()) {
        kept.retention++;
        continue;
      }
      due.push({ id: run.id, steps: run.steps.length, lastChange });
      if (due.length >= max) break;
    }
    if (runs.length < BATCH) break;
  }
  return { due, kept };
}

/** Takes the pass's lease (false: another process holds a fresh one). */
async function takeLease(prisma: PrismaClient, holder: string): Promise<boolean> {
  try {
    return await writeTransaction(prisma, async (tx, now) => {
      const { count } = await tx.setting.updateMany({ where: { key: LEASE_KEY, updatedAt: { lt: new Date(now.getTime() - LEASE_MS) } }, data: { value: { holder }, updatedBy: holder, updatedAt: now } });
      if (count === 1) return true;
      if (await tx.setting.findUnique({ where: { key: LEASE_KEY }, select: { key: true } })) return false;
      await tx.setting.create({ data: { key: LEASE_KEY, value: { holder }, updatedBy: holder, updatedAt: now } });
      return true;
    });
  } catch (e) {
    if (isUniqueViolation(e)) return false;
    throw e;
  }
}

async function releaseLease(prisma: PrismaClient, holder: string): Promise<void> {
  await writeTransaction(prisma, (tx) => tx.setting.deleteMany({ where: { key: LEASE_KEY, updatedBy: holder } }));
}

/** The first sealed value's key id in a stored JSON value (null: nothing sealed). */
function sealedKeyIn(value: unknown): string | null {
  if (isSealed(value)) return sealedKeyId(value as string);
  if (value !== null && typeof value === "object") {
    for (const v of Object.values(value as Record<string, unknown>)) {
      const id = sealedKeyIn(v);
      if (id) return id;
    }
  }
  return null;
}

/**
 * A correction as archived: the desk's working copy is kept in clear in the hot table (support staff
 * edit and send it; an erasure blanks it there), but a file cannot be blanked later, so the words
 * and recipients of a correction whose step is sealed are sealed under the step's key before they are
 * written (lib/core/privacy/ARCHITECTURE.md, invariant 1). A destroyed key: the erasure already blanked them.
 */
async function sealedCorrection(vault: PersonalDataVault, row: Correction, steps: readonly Step[]): Promise<Correction> {
  const keyId = sealedKeyIn(steps.find((s) => s.id === row.stepId)?.args);
  const key = keyId ? await vault.keyById(keyId) : null;
  if (!key) return row;
  const seal = <T,>(v: T): T | string => (v === null || v === undefined || isSealed(v) ? v : sealValue(key.key, key.id, v as never));
  return { ...row, subject: seal(row.subject), body: seal(row.body), originalSubject: seal(row.originalSubject), originalBody: seal(row.originalBody), recipients: seal(row.recipients) as Correction["recipients"] };
}

/** Writes the due runs to `file`; returns the chains' heads (by scope) and the counts. */
async function writeArchive(prisma: PrismaClient, writer: ArchiveWriter, runIds: readonly string[]): Promise<{ heads: Map<string, { seq: number; hash: string }>; runs: number; events: number }> {
  const vault = personalDataVault(prisma);
  const heads = new Map<string, { seq: number; hash: string }>();
  let runs = 0;
  let events = 0;
  for (let i = 0; i < runIds.length; i += BATCH) {
    const ids = runIds.slice(i, i + BATCH);
    const scopes = ids.map(runScope);
    const rows = await readOnConnection(prisma, async (db) => ({
      runs: await db.run.findMany({ where: { id: { in: ids } }, orderBy: { id: "asc" } }),
      steps: await db.step.findMany({ where: { runId: { in: ids } }, orderBy: [{ runId: "asc" }, { stepIdx: "asc" }] }),
      pivots: await db.pivot.findMany({ where: { runId: { in: ids } }, orderBy: { id: "asc" } }),
      escalations: await db.escalation.findMany({ where: { runId: { in: ids } }, orderBy: { id: "asc" } }),
      corrections: await db.correction.findMany({ where: { runId: { in: ids } }, orderBy: { id: "asc" } }),
      revokes: await db.revoke.findMany({ where: { runId: { in: ids } }, orderBy: { id: "asc" } }),
      tasks: await db.workerTask.findMany({ where: { runId: { in: ids } }, orderBy: { id: "asc" } }),
      events: await db.auditEvent.findMany({ where: { scope: { in: scopes } }, orderBy: [{ scope: "asc" }, { seq: "asc" }] }),
    }));
    for (const row of rows.runs) writer.write(ArchiveLineType.run, { row });
    for (const row of rows.steps) writer.write(ArchiveLineType.step, { row });
    for (const row of rows.pivots) writer.write(ArchiveLineType.pivot, { row });
    for (const row of rows.escalations) writer.write(ArchiveLineType.escalation, { row });
    for (const row of rows.corrections) writer.write(ArchiveLineType.correction, { row: await sealedCorrection(vault, row, rows.steps) });
    for (const row of rows.revokes) writer.write(ArchiveLineType.revoke, { row });
    for (const row of rows.tasks) writer.write(ArchiveLineType.task, { row });
    for (const row of rows.events) {
      writer.write(ArchiveLineType.event, { row });
      heads.set(row.scope, { seq: row.seq, hash: row.hash });
    }
    runs += rows.runs.length;
    events += rows.events.length;
  }
  return { heads, runs, events };
}

/**
 * Removes one batch of archived runs in one transaction, each fenced on its chain's head as written
 * to the file; records the heads it removed (ArchivedChain). Returns how many runs it removed.
 */
async function removeBatch(prisma: PrismaClient, archiveId: string, ids: readonly string[], heads: ReadonlyMap<string, { seq: number; hash: string }>): Promise<number> {
  return writeTransaction(prisma, async (tx, now) => {
    const scopes = ids.map(runScope);
    // The first statement writes (transactions.ts): clear heads an earlier, interrupted pass recorded.
    await tx.archivedChain.deleteMany({ where: { scope: { in: scopes }, archiveId: { not: archiveId } } });
    const current = await tx.auditEvent.groupBy({ by: ["scope"], where: { scope: { in: scopes } }, _max: { seq: true }, orderBy: { scope: "asc" } });
    const currentSeq = new Map(current.map((c) => [c.scope, c._max.seq]));
    // A run whose chain grew after the file was written changed since: it stays for the next pass.
    // So does one that is no longer settled as the file holds it (a revoke pulled between the first
    // reading and the file): its open work is looked up again here, in the removal's transaction.
    const open = new Set<string>([
      ...(await tx.run.findMany({ where: { id: { in: [...ids] }, status: { notIn: [RunStatus.COMPLETED, RunStatus.UNWOUND] } }, select: { id: true } })).map((r) => r.id),
      ...(await tx.step.findMany({ where: { runId: { in: [...ids] }, OR: [{ status: { in: [...UNSETTLED_STATUSES] } }, { compensationState: CompensationState.REQUESTED }] }, select: { runId: true } })).map((r) => r.runId),
      ...(await tx.escalation.findMany({ where: { runId: { in: [...ids] }, status: { not: EscalationStatus.RESOLVED } }, select: { runId: true } })).map((r) => r.runId),
      ...(await tx.correction.findMany({ where: { runId: { in: [...ids] }, status: { in: [CorrectionStatus.DRAFT, CorrectionStatus.SENDING] } }, select: { runId: true } })).map((r) => r.runId),
      ...(await tx.workerTask.findMany({ where: { runId: { in: [...ids] }, status: { in: [WorkerTaskStatus.PENDING, WorkerTaskStatus.CLAIMED] } }, select: { runId: true } })).map((r) => r.runId),
    ]);
    const fenced = ids.filter((id) => !open.has(id) && (currentSeq.get(runScope(id)) ?? null) === (heads.get(runScope(id))?.seq ?? null));
    if (fenced.length === 0) return 0;
    const fencedScopes = fenced.map(runScope);
    const archived: Prisma.ArchivedChainCreateManyInput[] = fencedScopes.flatMap((scope) => {
      const head = heads.get(scope);
      return head ? [{ scope, seq: head.seq, hash: head.hash, archiveId, archivedAt: now }] : [];
    });
    if (archived.length > 0) await tx.archivedChain.createMany({ data: archived });
    const runIds = { in: fenced };
    await tx.correction.deleteMany({ where: { runId: runIds } });
    await tx.escalation.deleteMany({ where: { runId: runIds } });
    await tx.revoke.deleteMany({ where: { runId: runIds } });
    await tx.step.deleteMany({ where: { runId: runIds } });
    await tx.pivot.deleteMany({ where: { runId: runIds } });
    await tx.workerTask.deleteMany({ where: { runId: runIds } });
    await tx.runTrace.deleteMany({ where: { runId: runIds } });
    await tx.auditEvent.deleteMany({ where: { scope: { in: fencedScopes } } });
    const { count } = await tx.run.deleteMany({ where: { id: runIds } });
    return count;
  });
}

function describeKept(kept: KeptCounts): string {
  const parts = [
    kept.openSteps > 0 ? `${kept.openSteps} with a step not settled or still revocable` : null,
    kept.openWork > 0 ? `${kept.openWork} with open escalations, corrections or worker tasks` : null,
    kept.retention > 0 ? `${kept.retention} inside their own tools' retention` : null,
  ].filter(Boolean);
  return parts.length > 0 ? ` Kept: ${parts.join("; ")}.` : "";
}

/** Runs one retention pass as `by` (see the module comment). */
export async function archiveSettledRuns(prisma: PrismaClient, options: ArchivePassOptions, by: Actor): Promise<ArchivePassResult> {
  const started = performance.now();
  const dryRun = options.dryRun ?? false;
  const maxRuns = options.maxRuns ?? DEFAULT_MAX_RUNS;
  if (!Number.isInteger(maxRuns) || maxRuns < 1) throw new Error(`The most runs a pass archives must be a whole number of at least 1 (got ${maxRuns}).`);
  const at = await databaseNow(prisma);
  const policy = await readRetentionPolicy(prisma);
  const seconds = () => Math.round(performance.now() - started) / 1000;
  const empty = { dryRun, at, steps: 0, oldest: null, newest: null, archive: null, removed: 0 };
  if (policy.defaultSec === null && policy.toolSec.size === 0) {
    return { ...empty, due: 0, kept: { openSteps: 0, openWork: 0, retention: 0 }, seconds: seconds(), message: "No retention is set, so every run is kept. Set a default (npm run retention -- default 400d) or a tool's own (npm run retention -- tool NAME 90d)." };
  }
  const { due, kept } = await dueRuns(prisma, policy, at, maxRuns);
  const summary = {
    due: due.length,
    steps: due.reduce((n, r) => n + r.steps, 0),
    oldest: due.length > 0 ? new Date(Math.min(...due.map((r) => r.lastChange.getTime()))) : null,
    newest: due.length > 0 ? new Date(Math.max(...due.map((r) => r.lastChange.getTime()))) : null,
    kept,
  };
  const range = summary.oldest && summary.newest ? ` (last changed ${summary.oldest.toISOString().slice(0, 10)} to ${summary.newest.toISOString().slice(0, 10)})` : "";
  if (dryRun || due.length === 0) {
    const what = due.length === 0 ? "No settled run is older than its retention." : `Would archive ${due.length} run(s) with ${summary.steps} step(s)${range} to ${archiveDirectory()}, then remove them from the hot tables.`;
    return { ...empty, ...summary, seconds: seconds(), message: `${what}${describeKept(kept)}${dryRun ? " Dry run: nothing was changed." : ""}` };
  }

  const holder = `${actorLabel(by)}:${process.pid}:${randomIds.next("lease")}`;
  if (!(await takeLease(prisma, holder))) {
    const lease = await readOnConnection(prisma, (db) => db.setting.findUnique({ where: { key: LEASE_KEY } }));
    return { ...empty, ...summary, seconds: seconds(), message: `Another retention pass (${lease?.updatedBy ?? "another process"}, since ${lease?.updatedAt.toISOString() ?? "a moment ago"}) is archiving now; nothing was done. Try again when it finishes (a lease older than an hour is taken over).` };
  }
  try {
    const key = resolveArchiveSigningKey();
    if (!key) throw new Error("No archive signing key could be made.");
    const directory = options.directory ?? archiveDirectory();
    mkdirSync(directory, { recursive: true, mode: 0o700 });
    const archiveId = randomIds.next("arc");
    const file = path.join(directory, `${at.toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z")}-${archiveId}.jsonl`);
    const writer = new ArchiveWriter(file);
    let written: Awaited<ReturnType<typeof writeArchive>>;
    let signature: string;
    try {
      writer.write(ArchiveLineType.header, { format: ARCHIVE_FORMAT, archiveId, createdAt: at.toISOString(), createdBy: actorLabel(by), publicKey: key.publicKeyBase64, keyFingerprint: key.fingerprint });
      written = await writeArchive(prisma, writer, due.map((r) => r.id));
      const heads: CheckpointHead[] = [...written.heads.entries()].map(([scope, h]) => [scope, h.seq, h.hash] as CheckpointHead).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      ({ signature } = writer.finish({ archiveId, runs: written.runs, events: written.events, heads, keyFingerprint: key.fingerprint }, key.privateKey));
    } catch (e) {
      writer.abandon();
      unlinkSync(file);
      throw e;
    }
    // The file is read back from disk and verified before a single row is removed.
    const check = await verifyArchiveFile(file, key.publicKey);
    if (!check.ok || check.runs !== written.runs || check.events !== written.events) {
      throw new Error(`The archive ${file} did not verify after it was written (${check.ok ? "its counts differ from what was read" : `${check.line ? `line ${check.line}: ` : ""}${check.message}`}); no row was removed. Check the disk, then run the pass again.`);
    }
    await writeTransaction(prisma, async (tx, now) => {
      await tx.archive.create({ data: { id: archiveId, file: path.basename(file), sha256: check.sha256, runs: written.runs, events: written.events, signature, createdBy: actorLabel(by), createdAt: now } });
      await appendAuditLink(tx, now, { scope: ARCHIVE_SCOPE, runId: null, stepId: null, type: RUNS_ARCHIVED, actor: by, data: { archiveId, file: path.basename(file), sha256: check.sha256, runs: written.runs, events: written.events, keyFingerprint: key.fingerprint, signature } });
    });
    let removed = 0;
    const ids = due.map((r) => r.id);
    for (let i = 0; i < ids.length; i += BATCH) removed += await removeBatch(prisma, archiveId, ids.slice(i, i + BATCH), written.heads);
    const bytes = statSync(file).size;
    const changed = written.runs - removed;
    return {
      ...empty,
      ...summary,
      archive: { id: archiveId, file, bytes, sha256: check.sha256, runs: written.runs, events: written.events },
      removed,
      seconds: seconds(),
      message: `Archived ${written.runs} run(s) (${summary.steps} steps, ${written.events} audit events)${range} to ${file} (${(bytes / 1024).toFixed(0)} KiB, sha256 ${check.sha256.slice(0, 16)}…, verified), and removed ${removed} from the hot tables.${changed > 0 ? ` ${changed} changed while the file was written and stay for the next pass.` : ""}${describeKept(kept)}`,
    };
  } finally {
    await releaseLease(prisma, holder);
  }
}
