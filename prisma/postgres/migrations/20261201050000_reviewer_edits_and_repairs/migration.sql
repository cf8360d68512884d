-- AlterTable
ALTER TABLE "Step" ADD COLUMN     "manualRepair" JSONB;

-- AlterTable
ALTER TABLE "Pivot" ADD COLUMN     "edits" JSONB,
ADD COLUMN     "reasonCode" TEXT;

