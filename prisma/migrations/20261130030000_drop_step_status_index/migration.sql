-- Every query on Step.status also names the run, which the (runId, stepIdx) index serves, so this
-- index only cost each intent and outcome an index write. Without it, PostgreSQL can apply an
-- outcome that leaves externalRef unchanged as a HOT update (no index entries at all).
-- DropIndex
DROP INDEX "Step_status_idx";
