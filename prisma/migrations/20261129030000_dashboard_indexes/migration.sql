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

