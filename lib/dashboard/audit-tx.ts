/**
 * Claiming and releasing escalations are dashboard-only transitions that the saga store port does
 * not have. They write the row and append the run's audit link in one transaction, exactly the way
 * PrismaSagaStore does (lib/db/prisma-saga-store.ts: database clock first, then the write, then
 * reads; the next link of the run's hash chain), so the chain stays one chain whoever wrote it.
 */
import type { Prisma } from "@/generated/prisma";
import { auditChainLock, databaseNow, serializeOn } from "@/lib/db/dialect";
import { getPrisma } from "@/lib/db/prisma";
import { onConnection } from "@/lib/db/prisma-saga-store";
import { auditHash } from "@/lib/saga/keys";
import { actorLabel, auditHashedContent, GENESIS_HASH, runScope, type AuditInput } from "@/lib/saga/store";

type Tx = Prisma.TransactionClient;

/** The same limits as the saga store's transactions (adapter mutex wait, busy_timeout wait). */
const TX_OPTIONS = { maxWait: 15_000, timeout: 30_000 } as const;

/**
 * One write transaction queued behind the saga store's: `fn` gets the database clock (read first,
 * with a table-less SELECT that takes no WAL snapshot) and must write before it reads.
 */
export async function writeTransaction<T>(fn: (tx: Tx, now: Date) => Promise<T>): Promise<T> {
  const prisma = await getPrisma();
  return onConnection(prisma, () => prisma.$transaction(async (tx) => fn(tx, await databaseNow(tx)), TX_OPTIONS));
}

/** Appends the next link of the run's audit chain; the (scope, seq) unique index refuses a fork. */
export async function appendRunAudit(tx: Tx, now: Date, runId: string, stepId: string | null, audit: AuditInput): Promise<void> {
  const scope = runScope(runId);
  await serializeOn(tx, [auditChainLock(scope)]);
  const last = await tx.auditEvent.findFirst({ where: { scope }, orderBy: { seq: "desc" }, select: { seq: true, hash: true } });
  const content = {
    seq: (last?.seq ?? 0) + 1,
    scope,
    runId,
    stepId,
    type: audit.type,
    actor: actorLabel(audit.actor),
    data: audit.data ?? {},
    at: now,
  };
  const prevHash = last?.hash ?? GENESIS_HASH;
  await tx.auditEvent.create({
    data: {
      ...content,
      data: content.data as Prisma.InputJsonValue,
      prevHash,
      hash: auditHash(prevHash, auditHashedContent(content)),
    },
  });
}
