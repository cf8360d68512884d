/**
 * The one way Sagaboard opens a pg pool: the Prisma client's (lib/core/db/prisma.ts) and the sign-in
 * throttle's (lib/server/auth/throttled-sign-in.ts). A URL naming a pooler in transaction mode
 * (`?pgbouncer=true`, lib/core/db/url.ts postgresTarget) gets a pool whose connections send every
 * statement unnamed, whoever sends it (the saga log's hot SQL, on the pool or on a client it lends, or
 * a library such as rate-limiter-flexible that names its own): a statement prepared on one server
 * connection is unknown on the next one the pooler hands out, and PgBouncer 1.18 keeps none of its own.
 */
import pg from "pg";
import { postgresTarget } from "./url";

/** A connection that drops the `name` of every query config it is given (parsed and planned per call). */
class UnnamedStatementClient extends pg.Client {
  // pg's overloads are many; this one method forwards them all, only without a statement name.
  override query(...args: unknown[]): never {
    const [config, ...rest] = args;
    const unnamed = config !== null && typeof config === "object" && "name" in config ? { ...(config as object), name: undefined } : config;
    return (pg.Client.prototype.query as (...a: unknown[]) => never).call(this, unnamed, ...rest);
  }
}

/** A pg pool for `url` (`options` as pg's, without the connection string); its connections are UnnamedStatementClient behind a transaction pooler. */
export function openPostgresPool(url: string, options: Omit<pg.PoolConfig, "connectionString"> = {}): pg.Pool {
  const { connectionString, transactionPooled } = postgresTarget(url);
  return new pg.Pool({ ...options, connectionString, ...(transactionPooled ? { Client: UnnamedStatementClient } : {}) });
}
