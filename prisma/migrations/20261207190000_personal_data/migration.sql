-- AlterTable
ALTER TABLE "ToolPolicy" ADD COLUMN "personalData" JSONB;

-- CreateTable
CREATE TABLE "SubjectKey" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "subjectHash" TEXT NOT NULL,
    "wrappedKey" TEXT,
    "createdAt" DATETIME NOT NULL,
    "erasedAt" DATETIME,
    "erasedBy" TEXT,
    "erasedReason" TEXT
);

-- CreateIndex
CREATE INDEX "SubjectKey_subjectHash_idx" ON "SubjectKey"("subjectHash");

