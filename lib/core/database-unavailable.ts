/**
 * Whether an error means "the database is not there right now" rather than "this request is wrong"
 * or "our bug": the connection refused, reset or closed by the server (PostgreSQL restarted, its
 * backends terminated, a network cut), the pool unable to hand out a connection in time, or SQLite's
 * file locked by another process past the busy timeout. Such a request is answered 503 UNAVAILABLE
 * with Retry-After (error-response.ts): the agent retries the same request later, and the saga log
 * answers the repeat from what was recorded, so a retry never doubles an effect.
 *
 * Read by codes only, never by localised messages, except pg's own connection errors, which carry no
 * code (their messages are fixed English strings in pg's source). The error's causes and a Prisma
 * error's driver-adapter error are searched too: the app wraps some (openPostgres's "Cannot reach").
 */

/** Prisma's codes for an unreachable or lost database: P1001 not reachable, P1002 timed out reaching it,
 * P1008 an operation timed out (SQLite's SQLITE_BUSY maps here), P1017 the server closed the connection,
 * P2024 no pooled connection in time, P2037 too many connections. */
const PRISMA_CODES: ReadonlySet<string> = new Set(["P1001", "P1002", "P1008", "P1017", "P2024", "P2037"]);

/** Node's socket errors on the way to the database. */
const SOCKET_CODES: ReadonlySet<string> = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN"]);

/** pg's connection errors that have no code (lib/client.js, pg-pool). */
const PG_CONNECTION_MESSAGES = [
  "Connection terminated unexpectedly",
  "Connection terminated due to connection timeout",
  "Connection terminated",
  "timeout exceeded when trying to connect",
  "Client has encountered a connection error and is not queryable",
];

/** A PostgreSQL SQLSTATE saying the connection or the server went away: class 08 (connection exception),
 * 57P01-57P03 (admin shutdown / terminated backend, crash shutdown, cannot connect now), 53300 (too many connections). */
function postgresStateUnavailable(state: string): boolean {
  return /^08[0-9A-Z]{3}$/.test(state) || state === "57P01" || state === "57P02" || state === "57P03" || state === "53300";
}

/** SQLite's "another connection holds the lock" codes (better-sqlite3's SqliteError codes). */
function sqliteCodeUnavailable(code: string): boolean {
  return code === "SQLITE_BUSY" || code.startsWith("SQLITE_BUSY_") || code === "SQLITE_LOCKED" || code.startsWith("SQLITE_LOCKED_");
}

function oneUnavailable(e: object): boolean {
  const { code, name, message } = e as { code?: unknown; name?: unknown; message?: unknown };
  if (name === "PrismaClientInitializationError") return true;
  if (typeof code === "string") {
    if (PRISMA_CODES.has(code) || SOCKET_CODES.has(code) || sqliteCodeUnavailable(code)) return true;
    // pg's DatabaseError carries the SQLSTATE in `code`; so does a driver-adapter error's `originalCode`.
    if (/^[0-9A-Z]{5}$/.test(code) && postgresStateUnavailable(code)) return true;
  }
  const original = (e as { originalCode?: unknown }).originalCode;
  if (typeof original === "string" && (postgresStateUnavailable(original) || sqliteCodeUnavailable(original))) return true;
  const kind = (e as { kind?: unknown }).kind;
  if (kind === "ConnectionClosed" || kind === "DatabaseNotReachable" || kind === "SocketTimeout" || kind === "TooManyConnections") return true;
  return typeof message === "string" && PG_CONNECTION_MESSAGES.some((m) => message === m || message.startsWith(`${m}:`) || message.startsWith(`${m} `));
}

/** True when `e` (or anything it wraps) says the database is unreachable or locked for now. */
export function isDatabaseUnavailable(e: unknown): boolean {
  const seen = new Set<unknown>();
  const queue: unknown[] = [e];
  while (queue.length > 0) {
    const next = queue.shift();
    if (next === null || typeof next !== "object" || seen.has(next)) continue;
    seen.add(next);
    if (oneUnavailable(next)) return true;
    const { cause, meta } = next as { cause?: unknown; meta?: { driverAdapterError?: unknown } };
    queue.push(cause, meta?.driverAdapterError);
  }
  return false;
}

/** Seconds an agent is asked to wait before retrying (the Retry-After header). */
export const DATABASE_RETRY_AFTER_SECONDS = 1;
