-- CreateTable
CREATE TABLE "AgentToken" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "name" TEXT NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "tools" JSONB NOT NULL,
    "createdBy" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revokedAt" DATETIME,
    "lastUsedAt" DATETIME
);

-- CreateTable
CREATE TABLE "IdempotentRequest" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "principal" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "method" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "requestHash" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "responseStatus" INTEGER,
    "responseBody" JSONB,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completedAt" DATETIME
);

-- CreateTable
CREATE TABLE "ToolPolicy" (
    "name" TEXT NOT NULL PRIMARY KEY,
    "toolClass" TEXT NOT NULL,
    "compensator" TEXT,
    "owner" TEXT,
    "policyVersion" INTEGER NOT NULL DEFAULT 1,
    "revocationWindowSec" INTEGER,
    "audienceRule" TEXT,
    "description" TEXT,
    "updatedBy" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "WorkerTask" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "kind" TEXT NOT NULL,
    "runId" TEXT NOT NULL,
    "stepId" TEXT,
    "tools" JSONB NOT NULL,
    "status" TEXT NOT NULL,
    "attempt" INTEGER NOT NULL DEFAULT 0,
    "claimedBy" TEXT,
    "leaseUntil" DATETIME,
    "dedupeKey" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "result" JSONB,
    "error" JSONB,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "User" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "email" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "passwordHash" TEXT,
    "role" TEXT NOT NULL,
    "disabledAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL
);

-- CreateIndex
CREATE UNIQUE INDEX "AgentToken_name_key" ON "AgentToken"("name");

-- CreateIndex
CREATE UNIQUE INDEX "AgentToken_tokenHash_key" ON "AgentToken"("tokenHash");

-- CreateIndex
CREATE UNIQUE INDEX "IdempotentRequest_principal_key_key" ON "IdempotentRequest"("principal", "key");

-- CreateIndex
CREATE UNIQUE INDEX "WorkerTask_dedupeKey_key" ON "WorkerTask"("dedupeKey");

-- CreateIndex
CREATE INDEX "WorkerTask_status_leaseUntil_idx" ON "WorkerTask"("status", "leaseUntil");

-- CreateIndex
CREATE INDEX "WorkerTask_runId_idx" ON "WorkerTask"("runId");

-- CreateIndex
CREATE UNIQUE INDEX "User_email_key" ON "User"("email");

