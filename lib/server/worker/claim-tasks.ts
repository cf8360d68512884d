/**
 * Claims worker tasks with a lease and a fencing token. Candidates are read first; each is then
 * claimed by a fenced update that names the `attempt` it saw, so of two workers racing for one task
 * exactly one changes a row, and the other skips it. Every claim bumps `attempt`: a settle or
 * heartbeat carrying an older one (a holder whose lease expired and was taken over) changes nothing.
 *
 * PostgreSQL: the candidates are selected inside the claim transaction with `FOR UPDATE SKIP
 * LOCKED`, so concurrent workers take disjoint rows without contending; the fenced update stays.
 */
import { Prisma, type PrismaClient } from "@/generated/prisma";
import { auditChainLock, databaseKind, jsonStringsWithin, serializeOn, skipLockedRows, type Db } from "@/lib/core/db/dialect";
import { runScope } from "@/packages/client/src/saga/store";
import { databaseNow } from "@/lib/core/db/dialect";
import { appendTaskAudit, readTx, toTaskRecord, type Tx } from "./task-record";
import { writeTransaction } from "@/lib/core/db/transactions";
import { WorkerTaskStatus } from "@/packages/client/src/protocol/tasks/vocabulary";
import { workerActor, type ClaimedTask, ZClaimTasksRequest, type TClaimTasksRequest } from "@/packages/client/src/protocol/tasks/task";

/** A claimable task as the candidate query saw it. */
interface Candidate {
  id: string;
  attempt: number;
  status: string;
  claimedBy: string | null;
  leaseUntil: Date | null;
}

/**
 * Claimable tasks the worker's tools cover, oldest first: PENDING, or CLAIMED with an expired lease.
 * The tool filter and the row locks are dialect-specific (lib/core/db/dialect.ts): SQLite reads the JSON
 * array with json_each and has no row locks; PostgreSQL tests `tools <@ $tools::jsonb` and ends with
 * `FOR UPDATE SKIP LOCKED` (only meaningful inside the claim transaction, where it is run there).
 */
function candidateQuery(db: Db, now: Date, tools: readonly string[], limit: number): Prisma.Sql {
  return Prisma.sql`
    SELECT t."id", t."attempt", t."status", t."claimedBy", t."leaseUntil"
    FROM "WorkerTask" AS t
    WHERE (t."status" = ${WorkerTaskStatus.PENDING} OR (t."status" = ${WorkerTaskStatus.CLAIMED} AND t."leaseUntil" < ${now}))
      AND ${jsonStringsWithin(db, Prisma.sql`t."tools"`, tools)}
    ORDER BY t."createdAt" ASC, t."id" ASC
    LIMIT ${limit}
    ${skipLockedRows(db)}`;
}

/**
 * Claims up to `max` tasks for `workerId` until `leaseMs` from now (database clock). Returns the
 * claimed tasks, each with its fencing token `attempt`; candidates another worker claimed first are
 * skipped (their fenced update changes 0 rows). A task taken over from an expired lease is audited
 * with the holder it was taken from. Throws a ZodError for malformed input.
 */
export async function claimTasks(prisma: PrismaClient, request: TClaimTasksRequest): Promise<ClaimedTask[]> {
  const { workerId, tools, max, leaseMs } = ZClaimTasksRequest.parse(request);
  const workerTools = [...new Set(tools)];

  if (databaseKind(prisma) === "postgresql") {
    // Select and lock in the claim transaction: the rows are ours until it commits, others skip them.
    return writeTransaction(prisma, async (tx, now) => {
      const locked = await tx.$queryRaw<Candidate[]>(candidateQuery(tx, now, workerTools, max));
      return claimCandidates(tx, now, locked, workerId, max, leaseMs);
    });
  }

  // SQLite: read a few more than `max`: some may be lost to a faster worker between this read and the claim.
  const candidates = await readTx(prisma, async (tx) =>
    tx.$queryRaw<Candidate[]>(candidateQuery(tx, await databaseNow(tx), workerTools, max * 2)),
  );
  if (candidates.length === 0) return [];
  return writeTransaction(prisma, (tx, now) => claimCandidates(tx, now, candidates, workerId, max, leaseMs));
}

/** The fenced claims of `candidates` (at most `max`) and their audit events, in the caller's transaction. */
async function claimCandidates(
  tx: Tx,
  now: Date,
  candidates: readonly Candidate[],
  workerId: string,
  max: number,
  leaseMs: number,
): Promise<ClaimedTask[]> {
  const leaseUntil = new Date(now.getTime() + leaseMs);
  const won: Candidate[] = [];
  for (const candidate of candidates) {
    if (won.length >= max) break;
    // The fence: UPDATE ... WHERE id = ? AND attempt = ? AND (PENDING OR (CLAIMED AND leaseUntil < now)).
    const { count } = await tx.workerTask.updateMany({
      where: {
        id: candidate.id,
        attempt: Number(candidate.attempt),
        OR: [{ status: WorkerTaskStatus.PENDING }, { status: WorkerTaskStatus.CLAIMED, leaseUntil: { lt: now } }],
      },
      data: { status: WorkerTaskStatus.CLAIMED, attempt: { increment: 1 }, claimedBy: workerId, leaseUntil, updatedAt: now },
    });
    if (count === 1) won.push(candidate);
  }
  if (won.length === 0) return [];

  const rows = await tx.workerTask.findMany({
    where: { id: { in: won.map((c) => c.id) } },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
  const claimed = rows.map(toTaskRecord) as ClaimedTask[];
  // Several runs' chains in one transaction: lock them all first, in one order (no deadlock).
  await serializeOn(tx, claimed.map((task) => auditChainLock(runScope(task.runId))));
  for (const task of claimed) {
    const seen = won.find((c) => c.id === task.id);
    const takenOver = seen?.status === WorkerTaskStatus.CLAIMED;
    await appendTaskAudit(tx, now, task, "task.claimed", workerActor(workerId), {
      taskId: task.id,
      kind: task.kind,
      attempt: task.attempt,
      leaseUntil: leaseUntil.toISOString(),
      takenOverFrom: takenOver ? (seen?.claimedBy ?? null) : null,
      expiredLeaseUntil: takenOver && seen?.leaseUntil ? new Date(seen.leaseUntil).toISOString() : null,
    });
  }
  return claimed;
}
