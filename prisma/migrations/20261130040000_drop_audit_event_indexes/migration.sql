-- AuditEvent keeps only its key and (scope, seq): every read takes one chain in seq order (the run
-- timeline now reads a run's chain by scope, as the store always did). Nothing read by (runId, id)
-- or by at, and each logged step writes two events, so each of these cost every tool call two
-- index writes.
-- DropIndex
DROP INDEX "AuditEvent_runId_id_idx";

-- DropIndex
DROP INDEX "AuditEvent_at_idx";

