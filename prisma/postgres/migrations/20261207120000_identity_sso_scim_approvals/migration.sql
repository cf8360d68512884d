-- AlterTable
ALTER TABLE "ToolPolicy" ADD COLUMN     "twoApprovers" BOOLEAN NOT NULL DEFAULT false;

-- AlterTable
ALTER TABLE "User" ADD COLUMN     "breakGlass" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "disabledReason" TEXT,
ADD COLUMN     "externalId" TEXT,
ADD COLUMN     "groups" JSONB,
ADD COLUMN     "lastSignInAt" TIMESTAMP(3),
ADD COLUMN     "source" TEXT NOT NULL DEFAULT 'local';

-- AlterTable
ALTER TABLE "UserSession" ADD COLUMN     "method" TEXT NOT NULL DEFAULT 'password';

-- CreateTable
CREATE TABLE "SsoGroupRole" (
    "group" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "updatedBy" TEXT NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "SsoGroupRole_pkey" PRIMARY KEY ("group")
);

-- CreateTable
CREATE TABLE "ScimToken" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "createdBy" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "revokedAt" TIMESTAMP(3),
    "lastUsedAt" TIMESTAMP(3),

    CONSTRAINT "ScimToken_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ScimGroup" (
    "id" TEXT NOT NULL,
    "displayName" TEXT NOT NULL,
    "externalId" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ScimGroup_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ApprovalLink" (
    "id" TEXT NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "pivotId" TEXT,
    "escalationId" TEXT,
    "userId" TEXT NOT NULL,
    "planHash" TEXT NOT NULL,
    "deliveryId" TEXT,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "usedAt" TIMESTAMP(3),
    "outcome" TEXT,
    "endedAt" TIMESTAMP(3),
    "endReason" TEXT,

    CONSTRAINT "ApprovalLink_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "PivotApproval" (
    "id" TEXT NOT NULL,
    "pivotId" TEXT NOT NULL,
    "planHash" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "approvedBy" TEXT NOT NULL,
    "via" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "PivotApproval_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "SlackMessage" (
    "id" TEXT NOT NULL,
    "pivotId" TEXT NOT NULL,
    "channel" TEXT NOT NULL,
    "ts" TEXT NOT NULL,
    "planHash" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "SlackMessage_pkey" PRIMARY KEY ("id")
);

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

