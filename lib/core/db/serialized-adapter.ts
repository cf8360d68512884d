/**
 * One SQLite connection, one thing at a time. The better-sqlite3 adapter runs a client's
 * interactive transactions and its plain queries on one connection, and only transactions wait for
 * each other: a plain query sent while another request's transaction is open runs inside it (it can
 * read uncommitted rows, and it opens a read snapshot before that transaction's first write, which
 * then fails with SQLITE_BUSY without waiting when another process holds the write lock). This
 * wrapper makes plain queries wait for open transactions too, for every user of the client: the
 * saga store, tokens, the harness and the dashboard alike. better-sqlite3 is synchronous, so
 * waiting costs nothing a busy wait would not already cost.
 *
 * Fair turns. Because the driver is synchronous, each query's promise settles as a microtask, so a
 * loop of awaited queries (a sweep raising 200 escalations, an unwind, an export) never lets the
 * event loop turn: on 100k generated runs the stuck-run sweep held the app's process for 2-7 s, and
 * every page and even GET /api/health waited for it. Before a query or transaction starts, the
 * connection gives other work one turn (a setImmediate) once it has been busy for FAIR_TURN_MS since
 * its last turn; the hot path pays one such turn per 10 ms of queries.
 */
import type { SqlDriverAdapter, SqlMigrationAwareDriverAdapterFactory, Transaction } from "@prisma/driver-adapter-utils";
import type Database from "better-sqlite3";

/** How long the connection may run queries back to back before other work gets a turn. */
export const FAIR_TURN_MS = 10;

/** Waits one turn of the event loop when the queries since the last turn have run for FAIR_TURN_MS. */
function fairTurns(): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < FAIR_TURN_MS) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    since = performance.now();
  };
}

/** A FIFO lock. */
class Lock {
  private tail: Promise<void> = Promise.resolve();

  /** Resolves with a release function once every earlier holder has released. */
  acquire(): Promise<() => void> {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const ready = this.tail.then(() => release);
    this.tail = this.tail.then(() => held);
    return ready;
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    const release = await this.acquire();
    try {
      return await fn();
    } finally {
      release();
    }
  }
}

function serializedTransaction(tx: Transaction, release: () => void): Transaction {
  let released = false;
  const done = () => {
    if (!released) {
      released = true;
      release();
    }
  };
  return Object.assign(Object.create(tx) as Transaction, {
    queryRaw: tx.queryRaw.bind(tx),
    executeRaw: tx.executeRaw.bind(tx),
    commit: async () => {
      try {
        await tx.commit();
      } finally {
        done();
      }
    },
    rollback: async () => {
      try {
        await tx.rollback();
      } finally {
        done();
      }
    },
  });
}

/** A connection's driver, lent out under its lock (see `SerializedFactory.exclusive`). */
interface Lender {
  exclusive<T>(fn: (db: Database.Database) => T): Promise<T>;
}

/** The better-sqlite3 Database the adapter keeps as `client` (checked, since it is not in its types). */
function driverOf(adapter: SqlDriverAdapter): Database.Database {
  const db = (adapter as unknown as { client?: Partial<Database.Database> }).client;
  if (!db || typeof db.prepare !== "function" || typeof db.transaction !== "function") {
    throw new Error(
      "The better-sqlite3 adapter no longer keeps its connection as `client`; lib/core/db/serialized-adapter.ts must be updated after this Prisma upgrade.",
    );
  }
  return db as Database.Database;
}

function serialized(adapter: SqlDriverAdapter, lend: (lender: Lender) => void): SqlDriverAdapter {
  const lock = new Lock();
  const db = driverOf(adapter);
  const fairTurn = fairTurns();
  const run = async <T>(fn: () => Promise<T>): Promise<T> => {
    await fairTurn();
    return lock.run(fn);
  };
  lend({ exclusive: (fn) => run(async () => fn(db)) });
  return Object.assign(Object.create(adapter) as SqlDriverAdapter, {
    queryRaw: (q: Parameters<SqlDriverAdapter["queryRaw"]>[0]) => run(() => adapter.queryRaw(q)),
    executeRaw: (q: Parameters<SqlDriverAdapter["executeRaw"]>[0]) => run(() => adapter.executeRaw(q)),
    executeScript: (script: string) => run(() => adapter.executeScript(script)),
    startTransaction: async (isolationLevel?: Parameters<SqlDriverAdapter["startTransaction"]>[0]) => {
      await fairTurn();
      const release = await lock.acquire();
      try {
        return serializedTransaction(await adapter.startTransaction(isolationLevel), release);
      } catch (e) {
        release();
        throw e;
      }
    },
    dispose: () => adapter.dispose(),
  });
}

/** An adapter factory whose connections serialise queries with transactions. */
export interface SerializedFactory extends SqlMigrationAwareDriverAdapterFactory {
  /**
   * Runs `fn` with the connection's better-sqlite3 Database once every query and transaction of the
   * client has finished, and holds them off until `fn` returns (it is synchronous, like the driver).
   */
  exclusive<T>(fn: (db: Database.Database) => T): Promise<T>;
}

/** Wraps an adapter factory so each connection it makes serialises queries with transactions. */
export function serializeConnections(factory: SqlMigrationAwareDriverAdapterFactory): SerializedFactory {
  let current: Lender | null = null;
  const lend = (lender: Lender) => (current = lender);
  return {
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: async () => serialized(await factory.connect(), lend),
    connectToShadowDb: async () => serialized(await factory.connectToShadowDb(), () => undefined),
    exclusive: (fn) => {
      if (!current) return Promise.reject(new Error("The SQLite client is not connected yet: run a query first (lib/core/db/prisma.ts does)."));
      return current.exclusive(fn);
    },
  };
}
