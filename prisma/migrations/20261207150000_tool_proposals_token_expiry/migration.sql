-- A team's declaration becomes a proposal beside the tool's row (the row in force only ever changes by an
-- admin), the compensation template a manifest declares is kept for calls that send none, agent tokens
-- may expire, and server-wide settings an admin keeps (the default lifetime of new tokens) get a table.

-- AlterTable
ALTER TABLE "AgentToken" ADD COLUMN "expiresAt" DATETIME;

-- AlterTable
ALTER TABLE "ToolPolicy" ADD COLUMN "compensationArgs" JSONB;
ALTER TABLE "ToolPolicy" ADD COLUMN "proposal" JSONB;
ALTER TABLE "ToolPolicy" ADD COLUMN "proposedAt" DATETIME;
ALTER TABLE "ToolPolicy" ADD COLUMN "proposedBy" TEXT;

-- CreateTable
CREATE TABLE "Setting" (
    "key" TEXT NOT NULL PRIMARY KEY,
    "value" JSONB NOT NULL,
    "updatedBy" TEXT NOT NULL,
    "updatedAt" DATETIME NOT NULL
);

