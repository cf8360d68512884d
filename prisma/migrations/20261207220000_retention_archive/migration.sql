-- AlterTable
ALTER TABLE "ToolPolicy" ADD COLUMN "retentionSec" INTEGER;

-- CreateTable
CREATE TABLE "Archive" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "file" TEXT NOT NULL,
    "sha256" TEXT NOT NULL,
    "runs" INTEGER NOT NULL,
    "events" INTEGER NOT NULL,
    "signature" TEXT NOT NULL,
    "createdBy" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "ArchivedChain" (
    "scope" TEXT NOT NULL PRIMARY KEY,
    "seq" INTEGER NOT NULL,
    "hash" TEXT NOT NULL,
    "archiveId" TEXT NOT NULL,
    "archivedAt" DATETIME NOT NULL
);

-- CreateIndex
CREATE INDEX "ArchivedChain_archiveId_idx" ON "ArchivedChain"("archiveId");
