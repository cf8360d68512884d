-- CreateTable
CREATE TABLE "SsoGroupRole" (
    "group" TEXT NOT NULL PRIMARY KEY,
    "role" TEXT NOT NULL,
    "updatedBy" TEXT NOT NULL,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "ScimToken" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "name" TEXT NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "createdBy" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL,
    "revokedAt" DATETIME,
    "lastUsedAt" DATETIME
);

-- CreateTable
CREATE TABLE "ScimGroup" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "displayName" TEXT NOT NULL,
    "externalId" TEXT,
    "createdAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "ApprovalLink" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "tokenHash" TEXT NOT NULL,
    "pivotId" TEXT,
    "escalationId" TEXT,
    "userId" TEXT NOT NULL,
    "planHash" TEXT NOT NULL,
    "deliveryId" TEXT,
    "expiresAt" DATETIME NOT NULL,
    "createdAt" DATETIME NOT NULL,
    "usedAt" DATETIME,
    "outcome" TEXT,
    "endedAt" DATETIME,
    "endReason" TEXT
);

-- CreateTable
CREATE TABLE "PivotApproval" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "pivotId" TEXT NOT NULL,
    "planHash" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "approvedBy" TEXT NOT NULL,
    "via" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "SlackMessage" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "pivotId" TEXT NOT NULL,
    "channel" TEXT NOT NULL,
    "ts" TEXT NOT NULL,
    "planHash" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL
);

-- AlterTable (added columns, no table rebuild: every earlier row keeps its place and its defaults)
ALTER TABLE "ToolPolicy" ADD COLUMN "twoApprovers" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "User" ADD COLUMN "disabledReason" TEXT;
ALTER TABLE "User" ADD COLUMN "source" TEXT NOT NULL DEFAULT 'local';
ALTER TABLE "User" ADD COLUMN "breakGlass" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "User" ADD COLUMN "groups" JSONB;
ALTER TABLE "User" ADD COLUMN "externalId" TEXT;
ALTER TABLE "User" ADD COLUMN "lastSignInAt" DATETIME;
ALTER TABLE "UserSession" ADD COLUMN "method" TEXT NOT NULL DEFAULT 'password';

-- CreateIndex
CREATE UNIQUE INDEX "ScimToken_name_key" ON "ScimToken"("name");

-- CreateIndex
CREATE UNIQUE INDEX "ScimToken_tokenHash_key" ON "ScimToken"("tokenHash");

-- CreateIndex
CREATE UNIQUE INDEX "ScimGroup_displayName_key" ON "ScimGroup"("displayName");

-- CreateIndex
CREATE UNIQUE INDEX "ApprovalLink_tokenHash_key" ON "ApprovalLink"("tokenHash");

-- CreateIndex
CREATE INDEX "ApprovalLink_pivotId_idx" ON "ApprovalLink"("pivotId");

-- CreateIndex
CREATE INDEX "ApprovalLink_escalationId_idx" ON "ApprovalLink"("escalationId");

-- CreateIndex
CREATE INDEX "ApprovalLink_deliveryId_idx" ON "ApprovalLink"("deliveryId");

-- CreateIndex
CREATE INDEX "PivotApproval_pivotId_idx" ON "PivotApproval"("pivotId");

-- CreateIndex
CREATE UNIQUE INDEX "PivotApproval_pivotId_planHash_userId_key" ON "PivotApproval"("pivotId", "planHash", "userId");

-- CreateIndex
CREATE INDEX "SlackMessage_pivotId_idx" ON "SlackMessage"("pivotId");

-- CreateIndex
CREATE UNIQUE INDEX "SlackMessage_channel_ts_key" ON "SlackMessage"("channel", "ts");

