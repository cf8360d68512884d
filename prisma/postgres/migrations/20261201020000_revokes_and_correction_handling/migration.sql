-- See prisma/migrations/20261201020000_revokes_and_correction_handling: the same change on PostgreSQL.
-- AlterTable
ALTER TABLE "Correction" ADD COLUMN     "claimedAt" TIMESTAMP(3),
ADD COLUMN     "claimedBy" TEXT,
ADD COLUMN     "dismissReason" TEXT,
ADD COLUMN     "dismissedAt" TIMESTAMP(3),
ADD COLUMN     "dismissedBy" TEXT,
ADD COLUMN     "draftedBy" TEXT,
ADD COLUMN     "editedAt" TIMESTAMP(3),
ADD COLUMN     "editedBy" TEXT,
ADD COLUMN     "messageId" TEXT,
ADD COLUMN     "originalBody" TEXT,
ADD COLUMN     "originalSubject" TEXT,
ADD COLUMN     "recipients" JSONB,
ADD COLUMN     "sendStepId" TEXT,
ADD COLUMN     "sentAt" TIMESTAMP(3),
ADD COLUMN     "sentBy" TEXT,
ADD COLUMN     "version" INTEGER NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "Revoke" (
    "id" TEXT NOT NULL,
    "runId" TEXT NOT NULL,
    "stepId" TEXT,
    "parentId" TEXT,
    "tool" TEXT,
    "kind" TEXT NOT NULL,
    "requestedBy" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "requestedAt" TIMESTAMP(3) NOT NULL,
    "windowEndsAt" TIMESTAMP(3),
    "escalationId" TEXT,
    "correctionId" TEXT,
    "taskId" TEXT,
    "dedupeKey" TEXT NOT NULL,

    CONSTRAINT "Revoke_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "Revoke_dedupeKey_key" ON "Revoke"("dedupeKey");

-- CreateIndex
CREATE INDEX "Revoke_requestedAt_id_idx" ON "Revoke"("requestedAt", "id");

-- CreateIndex
CREATE INDEX "Revoke_requestedBy_requestedAt_idx" ON "Revoke"("requestedBy", "requestedAt");

-- CreateIndex
CREATE INDEX "Revoke_runId_idx" ON "Revoke"("runId");

-- AddForeignKey
ALTER TABLE "Revoke" ADD CONSTRAINT "Revoke_runId_fkey" FOREIGN KEY ("runId") REFERENCES "Run"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

