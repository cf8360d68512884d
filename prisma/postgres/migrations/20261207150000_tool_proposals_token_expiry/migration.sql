-- See the SQLite migration of the same name: tool proposals, compensation templates, token expiry, settings.

-- AlterTable
ALTER TABLE "AgentToken" ADD COLUMN     "expiresAt" TIMESTAMP(3);

-- AlterTable
ALTER TABLE "ToolPolicy" ADD COLUMN     "compensationArgs" JSONB,
ADD COLUMN     "proposal" JSONB,
ADD COLUMN     "proposedAt" TIMESTAMP(3),
ADD COLUMN     "proposedBy" TEXT;

-- CreateTable
CREATE TABLE "Setting" (
    "key" TEXT NOT NULL,
    "value" JSONB NOT NULL,
    "updatedBy" TEXT NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Setting_pkey" PRIMARY KEY ("key")
);

