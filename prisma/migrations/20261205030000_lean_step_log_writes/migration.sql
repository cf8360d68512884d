-- Fewer pages written per logged step (issue 29). Counted frame by frame in the WAL, a step's two
-- commits wrote 16.9 pages: 11.4 for the intent, 5.5 for the outcome. Three of them bought nothing:
--
-- 1. AuditEvent's AUTOINCREMENT updated sqlite_sequence on every event, one page per commit. Without
--    it SQLite gives each event max(id) + 1, which only grows, since nothing ever deletes an event.
--    (`prisma migrate diff` from the datamodel writes AUTOINCREMENT back for `autoincrement()`; the
--    drift test compares columns and indexes, which are the same.)
-- 2. Step's externalRef and compensationRef indexes held one NULL entry per step (most steps have no
--    reference), one page each per intent; and the outcome's UPDATE names externalRef, so SQLite
--    rewrote its entry on every outcome, NULL to NULL. Indexed only where set, they are still what the
--    runs list's search by reference reads (equality implies NOT NULL), and a step without a reference
--    never touches them.

-- RedefineTable
CREATE TABLE "new_AuditEvent" (
    "id" INTEGER NOT NULL PRIMARY KEY,
    "scope" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "runId" TEXT,
    "stepId" TEXT,
    "type" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "at" DATETIME NOT NULL,
    "prevHash" TEXT NOT NULL,
    "hash" TEXT NOT NULL
);
INSERT INTO "new_AuditEvent" ("id", "scope", "seq", "runId", "stepId", "type", "actor", "data", "at", "prevHash", "hash")
SELECT "id", "scope", "seq", "runId", "stepId", "type", "actor", "data", "at", "prevHash", "hash" FROM "AuditEvent";
DROP TABLE "AuditEvent";
ALTER TABLE "new_AuditEvent" RENAME TO "AuditEvent";
CREATE UNIQUE INDEX "AuditEvent_scope_seq_key" ON "AuditEvent"("scope", "seq");
CREATE INDEX "AuditEvent_step_reconciled_idx" ON "AuditEvent"("at") WHERE "type" = 'step.reconciled';

-- Partial indexes (written by hand: Prisma's datamodel has no `where`)
DROP INDEX "Step_externalRef_idx";
CREATE INDEX "Step_externalRef_idx" ON "Step"("externalRef") WHERE "externalRef" IS NOT NULL;
DROP INDEX "Step_compensationRef_idx";
CREATE INDEX "Step_compensationRef_idx" ON "Step"("compensationRef") WHERE "compensationRef" IS NOT NULL;
