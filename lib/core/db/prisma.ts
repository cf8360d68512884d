import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";
import { Prisma, PrismaClient } from "@/generated/prisma";
import { Prisma as PostgresPrisma, PrismaClient as PostgresPrismaClient } from "@/generated/prisma-pg";
import { registerRawDriver, type DatabaseObserver } from "./raw-driver";
import { serializeConnections } from "./serialized-adapter";
import { isPostgresUrl, postgresPoolIdleMs, postgresPoolSize, redactUrl, sqliteFilePath } from "./url";
import { openPostgresPool } from "./postgres-pool";

export { databaseKind } from "./dialect";

/**
 * The one Prisma client module. Everything that talks to the database gets its client here.
 * DATABASE_URL picks the store: unset or `file:...` is SQLite, `postgresql://` / `postgres://` is
 * PostgreSQL.
 *
 * SQLite (better-sqlite3 adapter), after the connection's pragmas are set:
 * - journal_mode=WAL: readers (the dashboard) never block the agent's writes;
 * - synchronous=FULL: in WAL mode every commit fsyncs the WAL, so an INTENDED row survives a power
 *   cut once the tool is called. better-sqlite3 is compiled with SQLITE_DEFAULT_WAL_SYNCHRONOUS=1
 *   (NORMAL), which would only sync at checkpoints and could lose the last commits;
 * - busy_timeout: another process writing (worker, seed script) makes us wait, not fail;
 * - a 64 MiB page cache and 256 MiB of memory-mapped reads, for the dashboard on large logs;
 * - and plain queries wait for this client's open transactions (serialized-adapter.ts).
 *
 * PostgreSQL (pg adapter): a pool of DATABASE_POOL_SIZE connections (default 10), each kept open
 * while idle for DATABASE_POOL_IDLE_SECONDS (default 600); every commit is
 * durable with the server's default synchronous_commit=on. No serialisation: transactions run
 * concurrently on their own connections (lib/core/db/dialect.ts covers what then needs a lock).
 *
 * One type for both: callers get the SQLite client's `PrismaClient` type whichever store is open.
 * Both clients are generated from the same models (prisma/postgres/schema.prisma is derived from
 * prisma/schema.prisma, and a test fails if they drift), so their model APIs are the same; the
 * PostgreSQL client is cast to that type here and nowhere else. What the cast hides is only what
 * PostgreSQL has on top (e.g. `mode: "insensitive"` filters): code that is to run on both stores
 * must not need it. The `Prisma` namespace values lib/ imports from the SQLite client (JsonNull,
 * DbNull, error classes) are the PostgreSQL client's too, because both share one runtime
 * (scripts/prisma-share-runtime.mjs, run by postinstall; checked below).
 */
export async function openPrisma(url: string | undefined = process.env.DATABASE_URL, options: OpenOptions = {}): Promise<PrismaClient> {
  return url !== undefined && isPostgresUrl(url) ? openPostgres(url, options) : openSqlite(url, options);
}

/** How to open a client. */
export interface OpenOptions {
  /**
   * Sees every statement the client sends, Prisma's and the saga log's own, and every commit (the
   * benchmark passes one in to count them per logged step); none by default.
   */
  observer?: DatabaseObserver;
}

type QueryEvents = { $on(event: "query", cb: (e: { query: string; params: string; duration: number }) => void): void };

function logOption(options: OpenOptions): Prisma.LogDefinition[] {
  return options.observer ? [{ emit: "event", level: "query" }] : [];
}

/** Reports Prisma's query log to the observer: every statement, and each COMMIT as a commit. */
function listen(client: unknown, options: OpenOptions): void {
  const observer = options.observer;
  if (!observer) return;
  (client as QueryEvents).$on("query", (e) => {
    observer.statement?.({ sql: e.query, via: "prisma", params: e.params, durationMs: e.duration });
    if (/^\s*COMMIT/i.test(e.query)) observer.commit?.();
  });
}

/**
 * How long a write waits for another process's lock before it fails (busy_timeout): 10 s, or
 * SAGABOARD_SQLITE_BUSY_TIMEOUT_MS. A wait blocks the whole process (better-sqlite3 is synchronous),
 * so the database-unavailable fault suite shortens it to rehearse "locked past the timeout" in CI time.
 */
export function sqliteBusyTimeoutMs(env: Record<string, string | undefined> = process.env): number {
  const raw = env.SAGABOARD_SQLITE_BUSY_TIMEOUT_MS?.trim();
  if (!raw) return 10_000;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) {
    throw new Error(`SAGABOARD_SQLITE_BUSY_TIMEOUT_MS must be a whole number of milliseconds above 0 (got "${raw}"); unset it for the default of 10000 (10 s).`);
  }
  return value;
}

async function openSqlite(url: string | undefined, options: OpenOptions): Promise<PrismaClient> {
  const adapter = serializeConnections(new PrismaBetterSQLite3({ url: `file:${sqliteFilePath(url)}`, timeout: sqliteBusyTimeoutMs() }));
  const client = new PrismaClient({ adapter, log: logOption(options) }) as PrismaClient;
  listen(client, options);
  await client.$queryRawUnsafe("PRAGMA journal_mode = WAL");
  await client.$executeRawUnsafe("PRAGMA synchronous = FULL");
  await client.$executeRawUnsafe("PRAGMA foreign_keys = ON");
  // A 64 MiB page cache and memory-mapped reads (the default cache is 2 MiB): at a million steps the
  // dashboard's index reads otherwise go back to the OS for most pages (measured with npm run bench:dashboard).
  await client.$executeRawUnsafe("PRAGMA cache_size = -65536");
  await client.$queryRawUnsafe("PRAGMA mmap_size = 268435456");
  registerRawDriver(client, { kind: "sqlite", exclusive: adapter.exclusive, observer: options.observer });
  return client;
}

async function openPostgres(url: string, options: OpenOptions): Promise<PrismaClient> {
  const shared = (a: unknown, b: unknown) => a === b;
  if (!shared(PostgresPrisma.JsonNull, Prisma.JsonNull) || !shared(PostgresPrisma.PrismaClientKnownRequestError, Prisma.PrismaClientKnownRequestError)) {
    throw new Error(
      "generated/prisma-pg has a Prisma runtime of its own, so JSON nulls and errors from lib/ would be misread. " +
        "Run `npm run db:generate` (postinstall does) to generate both clients and share the runtime.",
    );
  }
  // connectionTimeoutMillis: a pool that stays exhausted fails a request instead of hanging it.
  // idleTimeoutMillis: connections stay open between bursts of calls (postgresPoolIdleMs);
  // allowExitOnIdle: idle ones never keep a finished script's process alive for that long.
  // The pool is ours so that the saga log's hot writes can share it (lib/core/db/raw-driver.ts).
  const pool = openPostgresPool(url, { max: postgresPoolSize(), connectionTimeoutMillis: 30_000, idleTimeoutMillis: postgresPoolIdleMs(), allowExitOnIdle: true });
  const adapter = new PrismaPg(pool, {
    // An idle pooled connection that breaks (server restart) is dropped by pg; say so, don't crash.
    onPoolError: (e) => console.warn(`[db] idle PostgreSQL connection lost: ${e.message}`),
    disposeExternalPool: true,
  });
  const client = new PostgresPrismaClient({ adapter, log: logOption(options) }) as PostgresPrismaClient;
  listen(client, options);
  try {
    // Fail here, with the address, rather than on the first request.
    await client.$queryRaw`SELECT 1`;
  } catch (e) {
    await client.$disconnect().catch(() => undefined);
    throw new Error(`Cannot reach PostgreSQL at ${redactUrl(url)}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
  registerRawDriver(client, { kind: "postgresql", pool, observer: options.observer });
  // The one cast (see above): same models, same model API.
  return client as unknown as PrismaClient;
}

/**
 * This bundle's copy of Prisma's runtime. Next.js bundles instrumentation.ts (the background duties)
 * apart from the routes, each with a copy of the runtime, and a client opened by one copy throws errors
 * the other's `instanceof Prisma.PrismaClientKnownRequestError` does not recognise (a duplicate email
 * answered 500 instead of 409) and reads its `Prisma.JsonNull` as `{}`. So each copy gets its own
 * process-wide client: the duty that opened the only client before any request no longer decides the
 * routes' (it did whenever a server saw no request before its first sweep).
 */
const RUNTIME: unknown = Prisma.PrismaClientKnownRequestError;
const globalForPrisma = globalThis as unknown as { sagaboardPrisma?: Map<unknown, Promise<PrismaClient>> };
const clients = () => (globalForPrisma.sagaboardPrisma ??= new Map());

/** The process-wide client for DATABASE_URL of this copy of Prisma's runtime (kept across Next.js dev reloads). */
export function getPrisma(): Promise<PrismaClient> {
  const open = clients();
  let client = open.get(RUNTIME);
  if (!client) {
    client = openPrisma().catch((e: unknown) => {
      // A failed open is not cached: the next request tries again instead of failing until a restart.
      open.delete(RUNTIME);
      throw e;
    });
    open.set(RUNTIME, client);
  }
  return client;
}

/** Makes `client` what getPrisma() answers in this process (benches measuring their own database), or forgets it (undefined). */
export function useProcessPrisma(client: Promise<PrismaClient> | undefined): void {
  if (client) clients().set(RUNTIME, client);
  else clients().delete(RUNTIME);
}

export type { PrismaClient };
