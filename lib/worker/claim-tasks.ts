/**
 * Claims worker tasks with a lease and a fencing token. Candidates are read first; each is then
 * claimed by a fenced update that names the `attempt` it saw, so of two workers racing for one task
 * exactly one changes a row, and the other skips it. Every claim bumps `attempt`: a settle or
 * heartbeat carrying an older one (a holder whose lease expired and was taken over) changes nothing.
 */
import { z } from "zod";
import { Prisma, type PrismaClient } from "@/generated/prisma";
import { appendTaskAudit, databaseNow, readTx, toTaskRecord, workerActor, writeTx, type ClaimedTask } from "./task-record";
import { WorkerTaskStatus } from "./vocabulary";

/** What `claimTasks` takes. */
export const ZClaimTasksSchema = z.object({
  /** The claiming worker (recorded as `claimedBy` and as the audit actor). */
  workerId: z.string().trim().min(1).max(200),
  /** Tools this worker has connectors for; only tasks whose tools are all among them are claimed. */
  tools: z.array(z.string().trim().min(1)).max(1000),
  /** At most this many tasks. */
  max: z.number().int().min(1).max(100),
  /** Lease length (database clock); heartbeat well within it (`extendLease`). */
  leaseMs: z.number().int().min(100).max(3_600_000),
});

/** What callers pass to `claimTasks`. */
export type TClaimTasksRequest = z.input<typeof ZClaimTasksSchema>;

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
 *
 * SQLite: the tool filter reads the JSON array with json_each. PostgreSQL will select and claim in
 * one transaction here, `... AND t.tools <@ $tools::jsonb ORDER BY ... LIMIT n FOR UPDATE SKIP LOCKED`,
 * so workers do not even contend for the same rows; the fenced update below stays the guarantee.
 */
function candidateQuery(now: Date, tools: readonly string[], limit: number): Prisma.Sql {
  const covered =
    tools.length === 0
      ? Prisma.sql`NOT EXISTS (SELECT 1 FROM json_each(t."tools"))`
      : Prisma.sql`NOT EXISTS (SELECT 1 FROM json_each(t."tools") AS j WHERE j."value" NOT IN (${Prisma.join([...tools])}))`;
  return Prisma.sql`
    SELECT t."id", t."attempt", t."status", t."claimedBy", t."leaseUntil"
    FROM "WorkerTask" AS t
    WHERE (t."status" = ${WorkerTaskStatus.PENDING} OR (t."status" = ${WorkerTaskStatus.CLAIMED} AND t."leaseUntil" < ${now}))
      AND ${covered}
    ORDER BY t."createdAt" ASC, t."id" ASC
    LIMIT ${limit}`;
}

/**
 * Claims up to `max` tasks for `workerId` until `leaseMs` from now (database clock). Returns the
 * claimed tasks, each with its fencing token `attempt`; candidates another worker claimed first are
 * skipped (their fenced update changes 0 rows). A task taken over from an expired lease is audited
 * with the holder it was taken from. Throws a ZodError for malformed input.
 */
export async function claimTasks(prisma: PrismaClient, request: TClaimTasksRequest): Promise<ClaimedTask[]> {
  const { workerId, tools, max, leaseMs } = ZClaimTasksSchema.parse(request);
  const workerTools = [...new Set(tools)];
  // Read a few more than `max`: some may be lost to a faster worker between this read and the claim.
  const candidates = await readTx(prisma, async (tx) =>
    tx.$queryRaw<Candidate[]>(candidateQuery(await databaseNow(tx), workerTools, max * 2)),
  );
  if (candidates.length === 0) return [];

  return writeTx(prisma, async (tx, now) => {
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
  });
}
