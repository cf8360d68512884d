/**
 * What a refused write means, read from Prisma's error code (never its message text). Both stores'
 * clients share one runtime (scripts/prisma-share-runtime.mjs), so one check serves SQLite and
 * PostgreSQL. The saga log's raw statements read the driver's own code instead
 * (step-log-postgres.ts: 23505 with the constraint's name).
 */
import { Prisma } from "@/generated/prisma";

/** A second row for a unique key (P2002): usually a racing writer got there first. */
export function isUniqueViolation(e: unknown): e is Prisma.PrismaClientKnownRequestError {
  return e instanceof Prisma.PrismaClientKnownRequestError && e.code === "P2002";
}

/** A row naming a parent that does not exist (P2003, a foreign key). */
export function isMissingReference(e: unknown): e is Prisma.PrismaClientKnownRequestError {
  return e instanceof Prisma.PrismaClientKnownRequestError && e.code === "P2003";
}
