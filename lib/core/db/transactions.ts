/**
 * How lib/ opens transactions, in one module: their limits, the per-client queue that keeps a plain
 * query out of an open transaction, the write transaction every state change with an audit event goes
 * through (the saga store, the worker's task queue, the dashboard's own transitions), and the run's
 * audit link those transactions append.
 *
 * Why a queue (SQLite through the better-sqlite3 adapter): the adapter runs a client's transaction
 * and its other queries on one connection. A query issued while a transaction is open joins it: it
 * reads uncommitted rows, and its read opens a WAL snapshot before the transaction's first write, so
 * that write fails at once with SQLITE_BUSY (no busy wait) when another process holds the write lock.
 * So every operation on a client that goes through here, reads included, waits for the previous one
 * to finish. This costs nothing real: better-sqlite3 is synchronous, and a busy wait blocks the whole
 * process anyway. PostgreSQL has none of this (a transaction has its own pooled connection; a plain
 * query never joins it), so there the queue is skipped and operations run concurrently.
 *
 * Why the clock first: SQLite opens interactive transactions with a deferred BEGIN, so a transaction
 * that reads a table first holds a WAL snapshot, and its later write fails at once with
 * SQLITE_BUSY_SNAPSHOT when another connection committed in between. A write transaction therefore
 * reads the database clock first (a table-less SELECT, which takes no snapshot), then writes (taking
 * the write lock, waiting on busy_timeout), and only then reads.
 */
import type { Prisma, PrismaClient } from "@/generated/prisma";
import { runScope, type AuditInput } from "@/packages/client/src/saga/store";
import { appendAuditLink, type ChainHead } from "./audit-chain";
import { databaseKind, databaseNow } from "./dialect";

/** A transaction's client. */
export type Tx = Prisma.TransactionClient;

/**
 * Interactive transaction limits. maxWait covers waiting for the adapter's per-client mutex (SQLite:
 * one transaction at a time per connection; PostgreSQL: a free pooled connection); timeout covers a
 * busy_timeout wait for another process's write lock (10 s in openPrisma) or a row lock, plus the work.
 */
export const TX_OPTIONS = { maxWait: 15_000, timeout: 30_000 } as const;

const connectionQueues = new WeakMap<PrismaClient, Promise<unknown>>();

/**
 * Runs `fn` after every earlier operation on `prisma` queued here has settled (SQLite; PostgreSQL at
 * once). Code that queries a client the saga store also uses should go through it, or it may run
 * inside a store transaction. `fn` must not queue on the same client again: it would wait for itself.
 */
export function onConnection<T>(prisma: PrismaClient, fn: () => Promise<T>): Promise<T> {
  if (databaseKind(prisma) === "postgresql") return fn();
  const previous = connectionQueues.get(prisma) ?? Promise.resolve();
  const run = previous.then(fn, fn);
  connectionQueues.set(
    prisma,
    run.then(
      () => undefined,
      () => undefined,
    ),
  );
  return run;
}

/**
 * One write transaction, queued on the client: `fn` gets the database clock (read first, see the
 * header) and its first statement must write.
 */
export function writeTransaction<T>(prisma: PrismaClient, fn: (tx: Tx, now: Date) => Promise<T>): Promise<T> {
  return onConnection(prisma, () => prisma.$transaction(async (tx) => fn(tx, await databaseNow(tx)), TX_OPTIONS));
}

/** One read outside any transaction, queued on the client so that it never joins an open one. */
export function readOnConnection<T>(prisma: PrismaClient, fn: (db: PrismaClient) => Promise<T>): Promise<T> {
  return onConnection(prisma, () => fn(prisma));
}

/**
 * Appends the next link of the run's audit chain in the caller's write transaction, after its own
 * write: the state change and its event commit together (the (scope, seq) unique index refuses a fork).
 * Returns the link, which the saga store's own SQL caches as the chain's head.
 */
export function appendRunAudit(tx: Tx, now: Date, runId: string, stepId: string | null, audit: AuditInput): Promise<ChainHead> {
  return appendAuditLink(tx, now, { scope: runScope(runId), runId, stepId, type: audit.type, actor: audit.actor, data: audit.data ?? {} });
}
