-- Hourly counts for the overview's two figures that read every row of a range (issue 29): at a
-- million steps the 90-day overview read 111k compensated steps and 9.8k reconcile events per view.
-- OverviewCount holds a count per (metric, hour or day, key); the triggers below append a +1/-1 delta to
-- OverviewDelta in the same transaction as each change (the step log's own statements are unchanged;
-- appending, never updating a shared row, keeps concurrent writers free of lock waits and deadlocks),
-- and the fold (lib/desks/overview/fold-overview-counts.ts) moves deltas into OverviewCount. An hour's
-- figure is its count plus its unfolded deltas, so it is exact whether or not the fold has run.

-- CreateTable
CREATE TABLE "OverviewCount" (
    "metric" TEXT NOT NULL,
    "span" TEXT NOT NULL,
    "period" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "n" INTEGER NOT NULL,

    CONSTRAINT "OverviewCount_pkey" PRIMARY KEY ("metric","span","period","key")
);

-- CreateTable
CREATE TABLE "OverviewDelta" (
    "id" SERIAL NOT NULL,
    "metric" TEXT NOT NULL,
    "hour" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "n" INTEGER NOT NULL,

    CONSTRAINT "OverviewDelta_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "OverviewDelta_metric_hour_idx" ON "OverviewDelta"("metric", "hour");

-- The hour a time falls in, as the overview keys it: `YYYY-MM-DDTHH` (UTC; the columns hold UTC).
CREATE FUNCTION "overview_hour"(t timestamp) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT to_char(date_trunc('hour', t), 'YYYY-MM-DD"T"HH24') $$;

-- Compensations, by the hour they were requested and their state now.
CREATE FUNCTION "Step_overview_compensation"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' AND OLD."compensationRequestedAt" IS NOT NULL THEN
    INSERT INTO "OverviewDelta" ("metric", "hour", "key", "n") VALUES ('compensation', "overview_hour"(OLD."compensationRequestedAt"), OLD."compensationState", -1);
  END IF;
  IF TG_OP <> 'DELETE' AND NEW."compensationRequestedAt" IS NOT NULL THEN
    INSERT INTO "OverviewDelta" ("metric", "hour", "key", "n") VALUES ('compensation', "overview_hour"(NEW."compensationRequestedAt"), NEW."compensationState", 1);
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER "Step_overview_compensation_insert" AFTER INSERT ON "Step" FOR EACH ROW
WHEN (NEW."compensationRequestedAt" IS NOT NULL) EXECUTE FUNCTION "Step_overview_compensation"();

CREATE TRIGGER "Step_overview_compensation_update" AFTER UPDATE OF "compensationRequestedAt", "compensationState" ON "Step" FOR EACH ROW
WHEN (OLD."compensationRequestedAt" IS DISTINCT FROM NEW."compensationRequestedAt" OR OLD."compensationState" IS DISTINCT FROM NEW."compensationState")
EXECUTE FUNCTION "Step_overview_compensation"();

CREATE TRIGGER "Step_overview_compensation_delete" AFTER DELETE ON "Step" FOR EACH ROW
WHEN (OLD."compensationRequestedAt" IS NOT NULL) EXECUTE FUNCTION "Step_overview_compensation"();

-- Duplicates prevented: a reconcile that found the effect (audit events are never changed or deleted).
CREATE FUNCTION "AuditEvent_overview_duplicate"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "OverviewDelta" ("metric", "hour", "key", "n") VALUES ('duplicate_prevented', "overview_hour"(NEW."at"), '', 1);
  RETURN NULL;
END $$;

CREATE TRIGGER "AuditEvent_overview_duplicate_insert" AFTER INSERT ON "AuditEvent" FOR EACH ROW
WHEN (NEW."type" = 'step.reconciled' AND (NEW."data"->>'outcome') = 'CONFIRMED') EXECUTE FUNCTION "AuditEvent_overview_duplicate"();

-- What the log already holds.
INSERT INTO "OverviewCount" ("metric", "span", "period", "key", "n")
SELECT 'compensation', 'hour', "overview_hour"("compensationRequestedAt"), "compensationState", COUNT(*) FROM "Step"
WHERE "compensationRequestedAt" IS NOT NULL GROUP BY 3, 4;

INSERT INTO "OverviewCount" ("metric", "span", "period", "key", "n")
SELECT 'duplicate_prevented', 'hour', "overview_hour"("at"), '', COUNT(*) FROM "AuditEvent"
WHERE "type" = 'step.reconciled' AND ("data"->>'outcome') = 'CONFIRMED' GROUP BY 3;

-- Each day's counts: the sum of its hours.
INSERT INTO "OverviewCount" ("metric", "span", "period", "key", "n")
SELECT "metric", 'day', substr("period", 1, 10), "key", SUM("n") FROM "OverviewCount" WHERE "span" = 'hour' GROUP BY 1, 3, 4;
