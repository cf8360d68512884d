-- The tool table an admin maintains: undo mechanism, lookup, key retention, revoke roles, approval,
-- correction template, review status and declarations; every edit a ToolPolicyVersion; compensators
-- the connectors can run. Rows that exist were registered by connectors, which all have a lookup
-- for their logged tools (defineTool refuses one without), so they keep working as REVIEWED.
-- CreateTable
CREATE TABLE "ToolPolicyVersion" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "toolName" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "changedBy" TEXT NOT NULL,
    "changedAt" DATETIME NOT NULL,
    "change" TEXT NOT NULL,
    "reason" TEXT,
    "diff" JSONB NOT NULL,
    "snapshot" JSONB NOT NULL,
    CONSTRAINT "ToolPolicyVersion_toolName_fkey" FOREIGN KEY ("toolName") REFERENCES "ToolPolicy" ("name") ON DELETE RESTRICT ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Compensator" (
    "name" TEXT NOT NULL PRIMARY KEY,
    "namespace" TEXT,
    "argsSchema" JSONB,
    "description" TEXT,
    "declaredBy" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_ToolPolicy" (
    "name" TEXT NOT NULL PRIMARY KEY,
    "toolClass" TEXT NOT NULL,
    "compensator" TEXT,
    "undoMechanism" TEXT,
    "lookupAvailable" BOOLEAN NOT NULL DEFAULT false,
    "owner" TEXT,
    "policyVersion" INTEGER NOT NULL DEFAULT 1,
    "revocationWindowSec" INTEGER,
    "keyRetentionSec" INTEGER,
    "audienceRule" TEXT,
    "revokeRoles" JSONB,
    "alwaysRequireApproval" BOOLEAN NOT NULL DEFAULT false,
    "correctionSubject" TEXT,
    "correctionBody" TEXT,
    "description" TEXT,
    "status" TEXT NOT NULL DEFAULT 'REVIEWED',
    "disabledBy" TEXT,
    "disabledAt" DATETIME,
    "verifiedAt" DATETIME,
    "verifiedBy" TEXT,
    "namespace" TEXT,
    "declared" JSONB,
    "declaredBy" TEXT,
    "declaredAt" DATETIME,
    "updatedBy" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL
);
INSERT INTO "new_ToolPolicy" ("audienceRule", "compensator", "createdAt", "description", "name", "owner", "policyVersion", "revocationWindowSec", "toolClass", "updatedAt", "updatedBy") SELECT "audienceRule", "compensator", "createdAt", "description", "name", "owner", "policyVersion", "revocationWindowSec", "toolClass", "updatedAt", "updatedBy" FROM "ToolPolicy";
DROP TABLE "ToolPolicy";
ALTER TABLE "new_ToolPolicy" RENAME TO "ToolPolicy";
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE UNIQUE INDEX "ToolPolicyVersion_toolName_version_key" ON "ToolPolicyVersion"("toolName", "version");


-- Connectors' logged tools have a lookup by key (the registry refuses one without).
UPDATE "ToolPolicy" SET "lookupAvailable" = ("toolClass" <> 'PURE');
