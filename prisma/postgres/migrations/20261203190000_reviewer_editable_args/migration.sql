-- AlterTable
ALTER TABLE "ToolPolicy" ADD COLUMN     "reviewerEditableArgs" JSONB;

