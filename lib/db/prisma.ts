import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaClient } from "@/generated/prisma";
import { serializeConnections } from "./serialized-adapter";
import { sqliteFilePath } from "./url";

/**
 * The one Prisma client module. Everything that talks to the database gets its client here, after
 * the connection's pragmas are set:
 * - journal_mode=WAL: readers (the dashboard) never block the agent's writes;
 * - synchronous=FULL: in WAL mode every commit fsyncs the WAL, so an INTENDED row survives a power
 *   cut once the tool is called. better-sqlite3 is compiled with SQLITE_DEFAULT_WAL_SYNCHRONOUS=1
 *   (NORMAL), which would only sync at checkpoints and could lose the last commits;
 * - busy_timeout: another process writing (worker, seed script) makes us wait, not fail;
 * - and plain queries wait for this client's open transactions (serialized-adapter.ts).
 */
export async function openPrisma(url?: string): Promise<PrismaClient> {
  const adapter = serializeConnections(new PrismaBetterSQLite3({ url: `file:${sqliteFilePath(url)}`, timeout: 10_000 }));
  const client = new PrismaClient({ adapter });
  await client.$queryRawUnsafe("PRAGMA journal_mode = WAL");
  await client.$executeRawUnsafe("PRAGMA synchronous = FULL");
  await client.$executeRawUnsafe("PRAGMA foreign_keys = ON");
  return client;
}

const globalForPrisma = globalThis as unknown as { sagaboardPrisma?: Promise<PrismaClient> };

/** The process-wide client for DATABASE_URL (kept across Next.js dev reloads). */
export function getPrisma(): Promise<PrismaClient> {
  globalForPrisma.sagaboardPrisma ??= openPrisma().catch((e: unknown) => {
    // A failed open is not cached: the next request tries again instead of failing until a restart.
    globalForPrisma.sagaboardPrisma = undefined;
    throw e;
  });
  return globalForPrisma.sagaboardPrisma;
}

export type { PrismaClient };
