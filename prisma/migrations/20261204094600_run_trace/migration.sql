-- CreateTable
CREATE TABLE "RunTrace" (
    "runId" TEXT NOT NULL PRIMARY KEY,
    "traceparent" TEXT NOT NULL,
    "updatedAt" DATETIME NOT NULL
);

