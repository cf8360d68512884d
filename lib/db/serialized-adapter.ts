/**
 * One SQLite connection, one thing at a time. The better-sqlite3 adapter runs a client's
 * interactive transactions and its plain queries on one connection, and only transactions wait for
 * each other: a plain query sent while another request's transaction is open runs inside it (it can
 * read uncommitted rows, and it opens a read snapshot before that transaction's first write, which
 * then fails with SQLITE_BUSY without waiting when another process holds the write lock). This
 * wrapper makes plain queries wait for open transactions too, for every user of the client: the
 * saga store, tokens, the harness and the dashboard alike. better-sqlite3 is synchronous, so
 * waiting costs nothing a busy wait would not already cost.
 */
import type { SqlDriverAdapter, SqlMigrationAwareDriverAdapterFactory, Transaction } from "@prisma/driver-adapter-utils";

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

function serialized(adapter: SqlDriverAdapter): SqlDriverAdapter {
  const lock = new Lock();
  return Object.assign(Object.create(adapter) as SqlDriverAdapter, {
    queryRaw: (q: Parameters<SqlDriverAdapter["queryRaw"]>[0]) => lock.run(() => adapter.queryRaw(q)),
    executeRaw: (q: Parameters<SqlDriverAdapter["executeRaw"]>[0]) => lock.run(() => adapter.executeRaw(q)),
    executeScript: (script: string) => lock.run(() => adapter.executeScript(script)),
    startTransaction: async (isolationLevel?: Parameters<SqlDriverAdapter["startTransaction"]>[0]) => {
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

/** Wraps an adapter factory so each connection it makes serialises queries with transactions. */
export function serializeConnections(factory: SqlMigrationAwareDriverAdapterFactory): SqlMigrationAwareDriverAdapterFactory {
  return {
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: async () => serialized(await factory.connect()),
    connectToShadowDb: async () => serialized(await factory.connectToShadowDb()),
  };
}
