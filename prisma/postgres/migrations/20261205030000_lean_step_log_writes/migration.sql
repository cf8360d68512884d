-- Step's externalRef and compensationRef indexes hold only the steps that have a reference (issue 29):
-- most steps have none, and each NULL entry cost every intent one index insert. The runs list's search
-- by reference is an equality, which implies NOT NULL, so it still reads them. (SQLite's migration of
-- the same name also drops AuditEvent's AUTOINCREMENT; PostgreSQL's identity sequence writes no page
-- per event.)

-- Partial indexes (written by hand: Prisma's datamodel has no `where`)
DROP INDEX "Step_externalRef_idx";
CREATE INDEX "Step_externalRef_idx" ON "Step"("externalRef") WHERE "externalRef" IS NOT NULL;
DROP INDEX "Step_compensationRef_idx";
CREATE INDEX "Step_compensationRef_idx" ON "Step"("compensationRef") WHERE "compensationRef" IS NOT NULL;
