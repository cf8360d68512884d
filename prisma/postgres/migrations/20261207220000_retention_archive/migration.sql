-- AlterTable
ALTER TABLE "ToolPolicy" ADD COLUMN     "retentionSec" INTEGER;

-- CreateTable
CREATE TABLE "Archive" (
    "id" TEXT NOT NULL,
    "file" TEXT NOT NULL,
    "sha256" TEXT NOT NULL,
    "runs" INTEGER NOT NULL,
    "events" INTEGER NOT NULL,
    "signature" TEXT NOT NULL,
    "createdBy" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Archive_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ArchivedChain" (
    "scope" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "hash" TEXT NOT NULL,
    "archiveId" TEXT NOT NULL,
    "archivedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ArchivedChain_pkey" PRIMARY KEY ("scope")
);

-- CreateIndex
CREATE INDEX "ArchivedChain_archiveId_idx" ON "ArchivedChain"("archiveId");
