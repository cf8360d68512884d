/**
 * Claiming and releasing escalations are dashboard-only transitions that the saga store port does
 * not have. They write the row and append the run's audit link in one transaction, exactly the way
 * PrismaSagaStore does (lib/db/prisma-saga-store.ts: database clock first, then the write, then
 * reads; the next link of the run's hash chain), so the chain stays one chain whoever wrote it.
 */
import type { Prisma } from "@/generated/prisma";
import { databaseNow } from "@/lib/db/dialect";
import { getPrisma } from "@/lib/db/prisma";
import { onConnection } from "@/lib/db/prisma-saga-store";
import { runScope, type AuditInput } from "@/lib/saga/store";
import { appendAuditLink } from "@/lib/db/audit-chain";

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
  await appendAuditLink(tx, now, { scope: runScope(runId), runId, stepId, type: audit.type, actor: audit.actor, data: audit.data ?? {} });
}
