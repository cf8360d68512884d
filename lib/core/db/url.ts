import path from "node:path";

/** The two stores: SQLite (the zero-set-up default) and PostgreSQL (several app instances and workers). */
export type DatabaseKind = "sqlite" | "postgresql";

/** Where the SQLite database lives when DATABASE_URL does not say: under the project, in data/. */
export const DEFAULT_SQLITE_PATH = path.join(process.cwd(), "data", "sagaboard.db");

/** Whether `url` names a PostgreSQL database (`postgresql://...` or `postgres://...`). */
export function isPostgresUrl(url: string | undefined): boolean {
  return url !== undefined && /^postgres(ql)?:\/\//i.test(url);
}

/** Which store DATABASE_URL (or `url`) names; unset means the default SQLite file. Throws on anything else. */
export function databaseKindOfUrl(url: string | undefined = process.env.DATABASE_URL): DatabaseKind {
  if (!url || url.startsWith("file:")) return "sqlite";
  if (isPostgresUrl(url)) return "postgresql";
  throw new Error(
    `DATABASE_URL must be a SQLite file URL such as file:./data/sagaboard.db or a PostgreSQL URL such as ` +
      `postgresql://user:password@host:5432/sagaboard (got "${url.split(":")[0]}:...").`,
  );
}

/** The SQLite file named by DATABASE_URL (`file:./data/x.db`), or the default. Throws for a PostgreSQL URL. */
export function sqliteFilePath(url: string | undefined = process.env.DATABASE_URL): string {
  if (!url) return DEFAULT_SQLITE_PATH;
  if (databaseKindOfUrl(url) !== "sqlite") {
    throw new Error(`DATABASE_URL names a PostgreSQL database, not a SQLite file; this needs the SQLite store.`);
  }
  const file = url.slice("file:".length);
  // Resolved at run time, never traced into the build (the database file is the deployment's, not the app's).
  return path.isAbsolute(file) ? file : path.resolve(/*turbopackIgnore: true*/ process.cwd(), file);
}

/**
 * The folder for local files that belong with the database (the generated auth secret, the demo's
 * tokens): the SQLite file's folder, or on PostgreSQL SAGABOARD_DATA_DIR, else data/ under the project.
 * (Several app instances on PostgreSQL must share NEXTAUTH_SECRET: set it rather than rely on a file.)
 */
export function dataDirectory(url: string | undefined = process.env.DATABASE_URL): string {
  if (databaseKindOfUrl(url) === "sqlite") return path.dirname(sqliteFilePath(url));
  const dir = process.env.SAGABOARD_DATA_DIR;
  return dir ? path.resolve(/*turbopackIgnore: true*/ process.cwd(), dir) : path.dirname(DEFAULT_SQLITE_PATH);
}

/** The PostgreSQL pool size: DATABASE_POOL_SIZE, default 10. */
export function postgresPoolSize(value: string | undefined = process.env.DATABASE_POOL_SIZE): number {
  return wholeNumberSetting("DATABASE_POOL_SIZE", value, { fallback: 10, min: 1, max: 1000, range: "from 1 to 1000" });
}

/**
 * How long a pooled PostgreSQL connection may sit idle before it is closed, in ms:
 * DATABASE_POOL_IDLE_SECONDS, default 600 (0: never). pg's own default is 10 s, and a connection
 * closed is one the next burst of calls opens again, prepares its statements on again and plans them
 * again: 50 concurrent runs after an 11 s pause ran at half the throughput of the burst before.
 */
export function postgresPoolIdleMs(value: string | undefined = process.env.DATABASE_POOL_IDLE_SECONDS): number {
  return 1000 * wholeNumberSetting("DATABASE_POOL_IDLE_SECONDS", value, { fallback: 600, min: 0, max: 86_400, range: "of seconds from 0 (never close) to 86400" });
}

/** A whole-number setting: `fallback` when unset or blank, else a whole number in [min, max], or an error naming it. */
function wholeNumberSetting(name: string, value: string | undefined, limits: { fallback: number; min: number; max: number; range: string }): number {
  if (value === undefined || value.trim() === "") return limits.fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < limits.min || n > limits.max) {
    throw new Error(`${name} must be a whole number ${limits.range} (got "${value}").`);
  }
  return n;
}

/** The URL with its password masked, for messages and logs. */
export function redactUrl(url: string): string {
  return url.replace(/^(\w+:\/\/[^:/@]*:)[^@]*@/, "$1***@");
}

/** A PostgreSQL URL read for what it says about a pooler in front of the server. */
export interface PostgresTarget {
  /** The URL to connect with (the `pgbouncer` parameter taken out: it is ours, not the server's). */
  connectionString: string;
  /**
   * Whether the URL names a pooler in transaction mode (`?pgbouncer=true`, the parameter Prisma uses
   * for the same purpose): each transaction may run on another server connection, so nothing may
   * outlive a transaction there (no named prepared statements, no session locks or settings).
   */
  transactionPooled: boolean;
}

/** What `url` says about a pooler (`?pgbouncer=true`): lib/core/db/prisma.ts and the migration runner read it. */
export function postgresTarget(url: string): PostgresTarget {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { connectionString: url, transactionPooled: false };
  }
  const flag = parsed.searchParams.get("pgbouncer");
  if (flag === null) return { connectionString: url, transactionPooled: false };
  parsed.searchParams.delete("pgbouncer");
  return { connectionString: parsed.toString(), transactionPooled: flag === "true" || flag === "1" };
}
