-- AlterTable
ALTER TABLE "Step" ADD COLUMN "manualRepair" JSONB;

-- AlterTable
ALTER TABLE "Pivot" ADD COLUMN "edits" JSONB;
ALTER TABLE "Pivot" ADD COLUMN "reasonCode" TEXT;

