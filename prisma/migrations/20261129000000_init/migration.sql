-- CreateTable
CREATE TABLE "Run" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "title" TEXT NOT NULL,
    "agent" TEXT NOT NULL,
    "onBehalfOf" TEXT,
    "metadata" JSONB NOT NULL,
    "status" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "Step" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "runId" TEXT NOT NULL,
    "stepIdx" INTEGER NOT NULL,
    "tool" TEXT NOT NULL,
    "toolClass" TEXT NOT NULL,
    "stepKey" TEXT NOT NULL,
    "args" JSONB NOT NULL,
    "argsHash" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "phase" TEXT NOT NULL,
    "policyVersion" INTEGER NOT NULL,
    "approvalId" TEXT,
    "planItemIdx" INTEGER,
    "externalRef" TEXT,
    "result" JSONB,
    "error" JSONB,
    "compensation" JSONB,
    "compensationKey" TEXT,
    "compensationState" TEXT NOT NULL DEFAULT 'NONE',
    "compensationRef" TEXT,
    "compensationRequestedAt" DATETIME,
    "compensationConfirmedAt" DATETIME,
    "compensationError" JSONB,
    "correction" JSONB,
    "audience" JSONB NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "Step_runId_fkey" FOREIGN KEY ("runId") REFERENCES "Run" ("id") ON DELETE RESTRICT ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Pivot" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "runId" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "summary" TEXT NOT NULL,
    "plan" JSONB NOT NULL,
    "planHash" TEXT NOT NULL,
    "stagedStepIds" JSONB NOT NULL,
    "deadline" DATETIME,
    "decidedBy" TEXT,
    "decidedAt" DATETIME,
    "reason" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Pivot_runId_fkey" FOREIGN KEY ("runId") REFERENCES "Run" ("id") ON DELETE RESTRICT ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Escalation" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "runId" TEXT NOT NULL,
    "stepId" TEXT,
    "kind" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "detail" JSONB NOT NULL,
    "owner" TEXT,
    "dedupeKey" TEXT NOT NULL,
    "claimedBy" TEXT,
    "claimedAt" DATETIME,
    "resolution" JSONB,
    "resolvedBy" TEXT,
    "resolvedAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Escalation_runId_fkey" FOREIGN KEY ("runId") REFERENCES "Run" ("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "Escalation_stepId_fkey" FOREIGN KEY ("stepId") REFERENCES "Step" ("id") ON DELETE SET NULL ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Correction" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "runId" TEXT NOT NULL,
    "stepId" TEXT NOT NULL,
    "audience" JSONB NOT NULL,
    "rank" INTEGER NOT NULL,
    "status" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Correction_runId_fkey" FOREIGN KEY ("runId") REFERENCES "Run" ("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "Correction_stepId_fkey" FOREIGN KEY ("stepId") REFERENCES "Step" ("id") ON DELETE RESTRICT ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "AuditEvent" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
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

-- CreateIndex
CREATE INDEX "Run_status_createdAt_idx" ON "Run"("status", "createdAt");

-- CreateIndex
CREATE INDEX "Run_agent_createdAt_idx" ON "Run"("agent", "createdAt");

-- CreateIndex
CREATE INDEX "Run_createdAt_idx" ON "Run"("createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "Step_stepKey_key" ON "Step"("stepKey");

-- CreateIndex
CREATE UNIQUE INDEX "Step_compensationKey_key" ON "Step"("compensationKey");

-- CreateIndex
CREATE INDEX "Step_status_idx" ON "Step"("status");

-- CreateIndex
CREATE INDEX "Step_externalRef_idx" ON "Step"("externalRef");

-- CreateIndex
CREATE UNIQUE INDEX "Step_runId_stepIdx_key" ON "Step"("runId", "stepIdx");

-- CreateIndex
CREATE INDEX "Pivot_runId_createdAt_idx" ON "Pivot"("runId", "createdAt");

-- CreateIndex
CREATE INDEX "Pivot_status_createdAt_idx" ON "Pivot"("status", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "Escalation_dedupeKey_key" ON "Escalation"("dedupeKey");

-- CreateIndex
CREATE INDEX "Escalation_status_createdAt_idx" ON "Escalation"("status", "createdAt");

-- CreateIndex
CREATE INDEX "Escalation_runId_idx" ON "Escalation"("runId");

-- CreateIndex
CREATE UNIQUE INDEX "Correction_stepId_key" ON "Correction"("stepId");

-- CreateIndex
CREATE INDEX "Correction_runId_rank_idx" ON "Correction"("runId", "rank");

-- CreateIndex
CREATE INDEX "Correction_status_rank_createdAt_idx" ON "Correction"("status", "rank", "createdAt");

-- CreateIndex
CREATE INDEX "AuditEvent_runId_id_idx" ON "AuditEvent"("runId", "id");

-- CreateIndex
CREATE INDEX "AuditEvent_at_idx" ON "AuditEvent"("at");

-- CreateIndex
CREATE UNIQUE INDEX "AuditEvent_scope_seq_key" ON "AuditEvent"("scope", "seq");

