-- Revoke triggers pulled by people, and what support staff do with a correction (claim, edit, send, dismiss).
-- CreateTable
CREATE TABLE "Revoke" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "runId" TEXT NOT NULL,
    "stepId" TEXT,
    "parentId" TEXT,
    "tool" TEXT,
    "kind" TEXT NOT NULL,
    "requestedBy" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "requestedAt" DATETIME NOT NULL,
    "windowEndsAt" DATETIME,
    "escalationId" TEXT,
    "correctionId" TEXT,
    "taskId" TEXT,
    "dedupeKey" TEXT NOT NULL,
    CONSTRAINT "Revoke_runId_fkey" FOREIGN KEY ("runId") REFERENCES "Run" ("id") ON DELETE RESTRICT ON UPDATE CASCADE
);

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_Correction" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "runId" TEXT NOT NULL,
    "stepId" TEXT NOT NULL,
    "audience" JSONB NOT NULL,
    "rank" INTEGER NOT NULL,
    "status" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "draftedBy" TEXT,
    "recipients" JSONB,
    "originalSubject" TEXT,
    "originalBody" TEXT,
    "editedBy" TEXT,
    "editedAt" DATETIME,
    "claimedBy" TEXT,
    "claimedAt" DATETIME,
    "version" INTEGER NOT NULL DEFAULT 0,
    "sentBy" TEXT,
    "sentAt" DATETIME,
    "messageId" TEXT,
    "sendStepId" TEXT,
    "dismissedBy" TEXT,
    "dismissedAt" DATETIME,
    "dismissReason" TEXT,
    CONSTRAINT "Correction_runId_fkey" FOREIGN KEY ("runId") REFERENCES "Run" ("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "Correction_stepId_fkey" FOREIGN KEY ("stepId") REFERENCES "Step" ("id") ON DELETE RESTRICT ON UPDATE CASCADE
);
INSERT INTO "new_Correction" ("audience", "body", "createdAt", "id", "rank", "runId", "status", "stepId", "subject") SELECT "audience", "body", "createdAt", "id", "rank", "runId", "status", "stepId", "subject" FROM "Correction";
DROP TABLE "Correction";
ALTER TABLE "new_Correction" RENAME TO "Correction";
CREATE UNIQUE INDEX "Correction_stepId_key" ON "Correction"("stepId");
CREATE INDEX "Correction_runId_rank_idx" ON "Correction"("runId", "rank");
CREATE INDEX "Correction_runId_status_idx" ON "Correction"("runId", "status");
CREATE INDEX "Correction_status_rank_createdAt_idx" ON "Correction"("status", "rank", "createdAt");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE UNIQUE INDEX "Revoke_dedupeKey_key" ON "Revoke"("dedupeKey");

-- CreateIndex
CREATE INDEX "Revoke_requestedAt_id_idx" ON "Revoke"("requestedAt", "id");

-- CreateIndex
CREATE INDEX "Revoke_requestedBy_requestedAt_idx" ON "Revoke"("requestedBy", "requestedAt");

-- CreateIndex
CREATE INDEX "Revoke_runId_idx" ON "Revoke"("runId");

