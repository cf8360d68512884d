-- CreateIndex
CREATE INDEX "Escalation_createdAt_id_idx" ON "Escalation"("createdAt", "id");

