-- AlterTable
ALTER TABLE "ToolPolicy" ADD COLUMN     "system" TEXT;

