-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_AgentToken" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "name" TEXT NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "tools" JSONB NOT NULL,
    "role" TEXT NOT NULL DEFAULT 'agent',
    "createdBy" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revokedAt" DATETIME,
    "lastUsedAt" DATETIME
);
INSERT INTO "new_AgentToken" ("createdAt", "createdBy", "id", "lastUsedAt", "name", "prefix", "revokedAt", "tokenHash", "tools") SELECT "createdAt", "createdBy", "id", "lastUsedAt", "name", "prefix", "revokedAt", "tokenHash", "tools" FROM "AgentToken";
DROP TABLE "AgentToken";
ALTER TABLE "new_AgentToken" RENAME TO "AgentToken";
CREATE UNIQUE INDEX "AgentToken_name_key" ON "AgentToken"("name");
CREATE UNIQUE INDEX "AgentToken_tokenHash_key" ON "AgentToken"("tokenHash");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE INDEX "WorkerTask_status_createdAt_idx" ON "WorkerTask"("status", "createdAt");

