import type { PersonRequest } from "@/lib/server/auth/current-user";
import { assertCan } from "@/lib/server/auth/roles";
import { withDb } from "@/lib/desks/dashboard/context";
import { databaseNow } from "@/lib/core/db/dialect";
import { WorkerTaskStatus } from "@/packages/client/src/protocol/tasks/vocabulary";
import { EscalationKind, EscalationStatus, RunStatus, StepStatus } from "@/packages/client/src/saga/vocabulary";
import type { TOperations } from "./views";

const HOUR_MS = 3_600_000;
/** How far back a worker counts as seen. */
const WORKER_WINDOW_MS = 24 * HOUR_MS;
/** The most task rows read to tell the workers apart (the newest; the counts above are exact). */
const WORKER_ROWS = 5_000;

/**
 * Whether Sagaboard itself is healthy, for admins: workers seen and what they did in the last hour,
 * the task queue, the notifier's backlog and newest error, stuck runs and the sweeps' newest marks.
 * Counts are grouped reads on the database clock, as `/api/metrics` counts its families.
 */
export async function getOperations({ actor }: PersonRequest): Promise<TOperations> {
  // The people who run Sagaboard are its admins (the only role that manages users and tokens).
  assertCan(actor, "users.manage");
  return withDb(async (prisma) => {
    const now = await databaseNow(prisma);
    const hourAgo = new Date(now.getTime() - HOUR_MS);
    const [byStatus, leased, leaseExpired, failedLastHour, oldestWaiting, recent, events, deliveries, lastError, stuck, needsAttention, unknownSteps, lastMark, lastStuck] = await prisma.$transaction([
      prisma.workerTask.groupBy({ by: ["status"], orderBy: { status: "asc" }, _count: { _all: true } }),
      prisma.workerTask.count({ where: { status: WorkerTaskStatus.CLAIMED, leaseUntil: { gt: now } } }),
      prisma.workerTask.count({ where: { status: WorkerTaskStatus.CLAIMED, OR: [{ leaseUntil: null }, { leaseUntil: { lte: now } }] } }),
      prisma.workerTask.count({ where: { status: WorkerTaskStatus.FAILED, updatedAt: { gte: hourAgo } } }),
      prisma.workerTask.findFirst({ where: { status: WorkerTaskStatus.PENDING }, orderBy: { createdAt: "asc" }, select: { createdAt: true } }),
      prisma.workerTask.findMany({
        where: { claimedBy: { not: null }, updatedAt: { gte: new Date(now.getTime() - WORKER_WINDOW_MS) } },
        orderBy: { updatedAt: "desc" },
        take: WORKER_ROWS,
        select: { claimedBy: true, status: true, updatedAt: true, tools: true, leaseUntil: true },
      }),
      prisma.notificationEvent.count({ where: { status: "PENDING" } }),
      prisma.notificationDelivery.groupBy({ by: ["status"], orderBy: { status: "asc" }, _count: { _all: true } }),
      prisma.notificationDelivery.findFirst({ where: { lastError: { not: null } }, orderBy: { nextAttemptAt: "desc" }, select: { target: true, channel: true, lastError: true, nextAttemptAt: true } }),
      prisma.escalation.count({ where: { kind: EscalationKind.STUCK_AFTER_PIVOT, status: { not: EscalationStatus.RESOLVED } } }),
      prisma.run.count({ where: { status: RunStatus.NEEDS_ATTENTION } }),
      prisma.step.count({ where: { status: StepStatus.UNKNOWN } }),
      prisma.slaMark.findFirst({ orderBy: { at: "desc" }, select: { at: true } }),
      prisma.escalation.findFirst({ where: { kind: EscalationKind.STUCK_AFTER_PIVOT }, orderBy: { createdAt: "desc" }, select: { createdAt: true } }),
    ]);
    const count = (rows: readonly { status: string; _count?: unknown }[], status: string): number => {
      const c = rows.find((r) => r.status === status)?._count;
      return c && typeof c === "object" && "_all" in c && typeof c._all === "number" ? c._all : 0;
    };

    const workers = new Map<string, TOperations["workers"][number]>();
    for (const t of recent) {
      if (!t.claimedBy) continue;
      const w = workers.get(t.claimedBy) ?? { id: t.claimedBy, lastSeen: t.updatedAt.toISOString(), tools: [], doneLastHour: 0, failedLastHour: 0, holding: 0 };
      for (const tool of Array.isArray(t.tools) ? t.tools : []) if (typeof tool === "string" && !w.tools.includes(tool)) w.tools.push(tool);
      if (t.updatedAt >= hourAgo && t.status === WorkerTaskStatus.DONE) w.doneLastHour++;
      if (t.updatedAt >= hourAgo && t.status === WorkerTaskStatus.FAILED) w.failedLastHour++;
      if (t.status === WorkerTaskStatus.CLAIMED && t.leaseUntil && t.leaseUntil > now) w.holding++;
      workers.set(t.claimedBy, w);
    }

    return {
      now: now.toISOString(),
      workers: [...workers.values()].map((w) => ({ ...w, tools: w.tools.sort() })),
      tasks: { waiting: count(byStatus, WorkerTaskStatus.PENDING), leased, leaseExpired, failedLastHour, oldestWaitingSince: oldestWaiting?.createdAt.toISOString() ?? null },
      notifier: {
        eventsPending: events,
        deliveriesPending: count(deliveries, "PENDING") + count(deliveries, "SENDING"),
        deliveriesFailed: count(deliveries, "FAILED"),
        lastError: lastError?.lastError ? { target: lastError.target, channel: lastError.channel, error: lastError.lastError, at: lastError.nextAttemptAt.toISOString() } : null,
      },
      runs: { stuck, needsAttention, unknownSteps },
      sweeps: { lastSlaMark: lastMark?.at.toISOString() ?? null, lastStuckRaised: lastStuck?.createdAt.toISOString() ?? null },
    };
  });
}
