/**
 * Bytes a write freed leave the database files (personal data sealed or keys destroyed,
 * lib/core/privacy/ARCHITECTURE.md): SQLite overwrites freed space while `secure_delete` is on and
 * its WAL is checkpointed and truncated; PostgreSQL vacuums the tables so no dead row version keeps them.
 */
import type { PrismaClient } from "@/generated/prisma";
import { databaseKind } from "@/lib/core/db/dialect";
import { readOnConnection } from "@/lib/core/db/transactions";

/** SQLite: whether freed space is overwritten (on only around the writes that free personal data). */
export async function secureDelete(prisma: PrismaClient, on: boolean): Promise<void> {
  if (databaseKind(prisma) === "postgresql") return;
  await readOnConnection(prisma, async (db) => {
    await db.$queryRawUnsafe(`PRAGMA secure_delete = ${on ? "ON" : "OFF"}`);
  });
}

/**
 * The destroyed keys' bytes leave the database files too: SQLite overwrites freed space
 * (secure_delete, set when the database is opened for an erasure) and its WAL is checkpointed and
 * truncated; PostgreSQL vacuums the table so no dead version keeps them.
 */
export async function scrubFreedBytes(prisma: PrismaClient): Promise<void> {
  if (databaseKind(prisma) === "postgresql") {
    await prisma.$executeRawUnsafe(`VACUUM "SubjectKey", "Step"`);
    return;
  }
  await readOnConnection(prisma, async (db) => {
    await db.$queryRawUnsafe(`PRAGMA wal_checkpoint(TRUNCATE)`);
  });
}
