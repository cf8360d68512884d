-- AlterTable
ALTER TABLE "ToolPolicy" ADD COLUMN     "personalData" JSONB;

-- CreateTable
CREATE TABLE "SubjectKey" (
    "id" TEXT NOT NULL,
    "subjectHash" TEXT NOT NULL,
    "wrappedKey" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "erasedAt" TIMESTAMP(3),
    "erasedBy" TEXT,
    "erasedReason" TEXT,

    CONSTRAINT "SubjectKey_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "SubjectKey_subjectHash_idx" ON "SubjectKey"("subjectHash");

