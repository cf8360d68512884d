-- See prisma/migrations/20261201010000_tool_table_versions: the same change on PostgreSQL.
-- AlterTable
ALTER TABLE "ToolPolicy" ADD COLUMN     "alwaysRequireApproval" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "correctionBody" TEXT,
ADD COLUMN     "correctionSubject" TEXT,
ADD COLUMN     "declared" JSONB,
ADD COLUMN     "declaredAt" TIMESTAMP(3),
ADD COLUMN     "declaredBy" TEXT,
ADD COLUMN     "disabledAt" TIMESTAMP(3),
ADD COLUMN     "disabledBy" TEXT,
ADD COLUMN     "keyRetentionSec" INTEGER,
ADD COLUMN     "lookupAvailable" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "namespace" TEXT,
ADD COLUMN     "revokeRoles" JSONB,
ADD COLUMN     "status" TEXT NOT NULL DEFAULT 'REVIEWED',
ADD COLUMN     "undoMechanism" TEXT,
ADD COLUMN     "verifiedAt" TIMESTAMP(3),
ADD COLUMN     "verifiedBy" TEXT;

-- CreateTable
CREATE TABLE "ToolPolicyVersion" (
    "id" TEXT NOT NULL,
    "toolName" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "changedBy" TEXT NOT NULL,
    "changedAt" TIMESTAMP(3) NOT NULL,
    "change" TEXT NOT NULL,
    "reason" TEXT,
    "diff" JSONB NOT NULL,
    "snapshot" JSONB NOT NULL,

    CONSTRAINT "ToolPolicyVersion_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Compensator" (
    "name" TEXT NOT NULL,
    "namespace" TEXT,
    "argsSchema" JSONB,
    "description" TEXT,
    "declaredBy" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Compensator_pkey" PRIMARY KEY ("name")
);

-- CreateIndex
CREATE UNIQUE INDEX "ToolPolicyVersion_toolName_version_key" ON "ToolPolicyVersion"("toolName", "version");

-- AddForeignKey
ALTER TABLE "ToolPolicyVersion" ADD CONSTRAINT "ToolPolicyVersion_toolName_fkey" FOREIGN KEY ("toolName") REFERENCES "ToolPolicy"("name") ON DELETE RESTRICT ON UPDATE CASCADE;


UPDATE "ToolPolicy" SET "lookupAvailable" = ("toolClass" <> 'PURE');
