-- DropIndex
DROP INDEX "Run_status_createdAt_idx";

-- DropIndex
DROP INDEX "Run_agent_createdAt_idx";

-- DropIndex
DROP INDEX "Run_createdAt_idx";

-- DropIndex
DROP INDEX "Escalation_runId_idx";

-- CreateIndex
CREATE INDEX "Run_status_createdAt_id_idx" ON "Run"("status", "createdAt", "id");

-- CreateIndex
CREATE INDEX "Run_agent_createdAt_id_idx" ON "Run"("agent", "createdAt", "id");

-- CreateIndex
CREATE INDEX "Run_createdAt_id_onBehalfOf_idx" ON "Run"("createdAt", "id", "onBehalfOf");

-- CreateIndex
CREATE INDEX "Step_compensationRef_idx" ON "Step"("compensationRef");

-- CreateIndex
CREATE INDEX "Pivot_status_runId_id_idx" ON "Pivot"("status", "runId", "id");

-- CreateIndex
CREATE INDEX "Escalation_status_claimedBy_kind_idx" ON "Escalation"("status", "claimedBy", "kind");

-- CreateIndex
CREATE INDEX "Escalation_runId_status_idx" ON "Escalation"("runId", "status");

-- CreateIndex
CREATE INDEX "Correction_runId_status_idx" ON "Correction"("runId", "status");


-- Hand-written, PostgreSQL only (not in the datamodel; tests/integration/schema-drift.test.ts knows it
-- through POSTGRES_ONLY_INDEXES in scripts/prisma-pg-schema.ts): the runs list's search matches any
-- part of onBehalfOf in any case (ILIKE '%...%'), which a B-tree cannot serve; a trigram GIN index
-- can. pg_trgm is a contrib extension that ships with PostgreSQL (trusted: the database owner may
-- create it). SQLite has no such index: its search scans Run_createdAt_id_onBehalfOf_idx.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- CreateIndex
CREATE INDEX "Run_onBehalfOf_trgm_idx" ON "Run" USING GIN ("onBehalfOf" gin_trgm_ops);
