-- CreateTable
CREATE TABLE "NotificationEvent" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "topic" TEXT NOT NULL,
    "eventType" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "runId" TEXT,
    "subjectId" TEXT,
    "data" JSONB NOT NULL,
    "createdAt" DATETIME NOT NULL,
    "status" TEXT NOT NULL,
    "fannedOutAt" DATETIME
);

-- CreateTable
CREATE TABLE "Webhook" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "name" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "secret" TEXT NOT NULL,
    "topics" JSONB NOT NULL,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "createdBy" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "NotificationDelivery" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "eventId" TEXT NOT NULL,
    "channel" TEXT NOT NULL,
    "webhookId" TEXT,
    "target" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "claim" INTEGER NOT NULL DEFAULT 0,
    "claimedBy" TEXT,
    "leaseUntil" DATETIME,
    "nextAttemptAt" DATETIME NOT NULL,
    "lastStatusCode" INTEGER,
    "lastError" TEXT,
    "deliveredAt" DATETIME,
    "replayedBy" TEXT,
    "replayedAt" DATETIME,
    "createdAt" DATETIME NOT NULL,
    CONSTRAINT "NotificationDelivery_eventId_fkey" FOREIGN KEY ("eventId") REFERENCES "NotificationEvent" ("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "NotificationDelivery_webhookId_fkey" FOREIGN KEY ("webhookId") REFERENCES "Webhook" ("id") ON DELETE SET NULL ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "NotificationTeam" (
    "name" TEXT NOT NULL PRIMARY KEY,
    "emails" JSONB NOT NULL,
    "updatedBy" TEXT NOT NULL,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "SlaRule" (
    "target" TEXT NOT NULL PRIMARY KEY,
    "slaSec" INTEGER NOT NULL,
    "reminderAt" REAL NOT NULL,
    "backupTeam" TEXT,
    "expireSec" INTEGER,
    "updatedBy" TEXT NOT NULL,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "SlaMark" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "itemId" TEXT NOT NULL,
    "stage" TEXT NOT NULL,
    "at" DATETIME NOT NULL,
    "dueAt" DATETIME NOT NULL
);

-- CreateIndex
CREATE INDEX "NotificationEvent_status_createdAt_idx" ON "NotificationEvent"("status", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "NotificationEvent_scope_seq_key" ON "NotificationEvent"("scope", "seq");

-- CreateIndex
CREATE UNIQUE INDEX "Webhook_name_key" ON "Webhook"("name");

-- CreateIndex
CREATE INDEX "NotificationDelivery_status_nextAttemptAt_idx" ON "NotificationDelivery"("status", "nextAttemptAt");

-- CreateIndex
CREATE INDEX "NotificationDelivery_webhookId_createdAt_idx" ON "NotificationDelivery"("webhookId", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "NotificationDelivery_eventId_channel_target_key" ON "NotificationDelivery"("eventId", "channel", "target");

-- CreateIndex
CREATE INDEX "Escalation_status_resolvedAt_idx" ON "Escalation"("status", "resolvedAt");

-- CreateIndex
CREATE INDEX "Correction_status_sentAt_idx" ON "Correction"("status", "sentAt");


-- Hand-written (Prisma 6's datamodel cannot express a partial index; scripts/prisma-pg-schema.ts
-- PARTIAL_INDEXES lists them for the drift test). The overview's figures count rare rows; these
-- indexes hold only those rows, so a plain step's intent and outcome write none of them.

-- Irreversible steps recorded before the pivot: the gate never lets one stage, so this stays empty.
CREATE INDEX "Step_irreversible_staging_idx" ON "Step"("createdAt") WHERE "toolClass" = 'IRREVERSIBLE' AND "phase" = 'STAGING';

-- Compensations, by when they were requested (only steps that had one).
CREATE INDEX "Step_compensation_requested_idx" ON "Step"("compensationRequestedAt", "compensationState") WHERE "compensationRequestedAt" IS NOT NULL;

-- Reconciles (the retries that found their effect by key), by time.
CREATE INDEX "AuditEvent_step_reconciled_idx" ON "AuditEvent"("at") WHERE "type" = 'step.reconciled';
