-- CreateTable
CREATE TABLE "RunTrace" (
    "runId" TEXT NOT NULL,
    "traceparent" TEXT NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "RunTrace_pkey" PRIMARY KEY ("runId")
);

