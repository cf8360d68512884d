-- Hourly counts for the overview's two figures that read every row of a range (issue 29): at a
-- million steps the 90-day overview read 111k compensated steps and 9.8k reconcile events per view.
-- OverviewCount holds a count per (metric, hour or day, key); the triggers below append a +1/-1 delta to
-- OverviewDelta in the same transaction as each change (the step log's own statements are unchanged),
-- and the fold (lib/desks/overview/fold-overview-counts.ts) moves deltas into OverviewCount. An hour's
-- figure is its count plus its unfolded deltas, so it is exact whether or not the fold has run.
-- The hour is `YYYY-MM-DDTHH` (UTC) of the column's text (this adapter writes ISO text; a number of
-- milliseconds, should one be stored, is converted).

-- CreateTable
CREATE TABLE "OverviewCount" (
    "metric" TEXT NOT NULL,
    "span" TEXT NOT NULL,
    "period" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "n" INTEGER NOT NULL,

    PRIMARY KEY ("metric", "span", "period", "key")
);

-- CreateTable
CREATE TABLE "OverviewDelta" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "metric" TEXT NOT NULL,
    "hour" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "n" INTEGER NOT NULL
);

-- CreateIndex
CREATE INDEX "OverviewDelta_metric_hour_idx" ON "OverviewDelta"("metric", "hour");

-- Compensations, by the hour they were requested and their state now.
CREATE TRIGGER "Step_overview_compensation_insert" AFTER INSERT ON "Step"
WHEN NEW."compensationRequestedAt" IS NOT NULL BEGIN
  INSERT INTO "OverviewDelta" ("metric", "hour", "key", "n") VALUES ('compensation',
    CASE typeof(NEW."compensationRequestedAt") WHEN 'text' THEN substr(replace(NEW."compensationRequestedAt", ' ', 'T'), 1, 13) ELSE strftime('%Y-%m-%dT%H', NEW."compensationRequestedAt" / 1000, 'unixepoch') END,
    NEW."compensationState", 1);
END;

CREATE TRIGGER "Step_overview_compensation_update" AFTER UPDATE OF "compensationRequestedAt", "compensationState" ON "Step"
WHEN OLD."compensationRequestedAt" IS NOT NEW."compensationRequestedAt" OR OLD."compensationState" IS NOT NEW."compensationState" BEGIN
  INSERT INTO "OverviewDelta" ("metric", "hour", "key", "n") SELECT 'compensation',
    CASE typeof(OLD."compensationRequestedAt") WHEN 'text' THEN substr(replace(OLD."compensationRequestedAt", ' ', 'T'), 1, 13) ELSE strftime('%Y-%m-%dT%H', OLD."compensationRequestedAt" / 1000, 'unixepoch') END,
    OLD."compensationState", -1 WHERE OLD."compensationRequestedAt" IS NOT NULL;
  INSERT INTO "OverviewDelta" ("metric", "hour", "key", "n") SELECT 'compensation',
    CASE typeof(NEW."compensationRequestedAt") WHEN 'text' THEN substr(replace(NEW."compensationRequestedAt", ' ', 'T'), 1, 13) ELSE strftime('%Y-%m-%dT%H', NEW."compensationRequestedAt" / 1000, 'unixepoch') END,
    NEW."compensationState", 1 WHERE NEW."compensationRequestedAt" IS NOT NULL;
END;

CREATE TRIGGER "Step_overview_compensation_delete" AFTER DELETE ON "Step"
WHEN OLD."compensationRequestedAt" IS NOT NULL BEGIN
  INSERT INTO "OverviewDelta" ("metric", "hour", "key", "n") VALUES ('compensation',
    CASE typeof(OLD."compensationRequestedAt") WHEN 'text' THEN substr(replace(OLD."compensationRequestedAt", ' ', 'T'), 1, 13) ELSE strftime('%Y-%m-%dT%H', OLD."compensationRequestedAt" / 1000, 'unixepoch') END,
    OLD."compensationState", -1);
END;

-- Duplicates prevented: a reconcile that found the effect (audit events are never changed or deleted).
CREATE TRIGGER "AuditEvent_overview_duplicate_insert" AFTER INSERT ON "AuditEvent"
WHEN NEW."type" = 'step.reconciled' AND json_extract(NEW."data", '$.outcome') = 'CONFIRMED' BEGIN
  INSERT INTO "OverviewDelta" ("metric", "hour", "key", "n") VALUES ('duplicate_prevented',
    CASE typeof(NEW."at") WHEN 'text' THEN substr(replace(NEW."at", ' ', 'T'), 1, 13) ELSE strftime('%Y-%m-%dT%H', NEW."at" / 1000, 'unixepoch') END,
    '', 1);
END;

-- What the log already holds.
INSERT INTO "OverviewCount" ("metric", "span", "period", "key", "n")
SELECT 'compensation', 'hour', h, "compensationState", COUNT(*) FROM (
  SELECT CASE typeof("compensationRequestedAt") WHEN 'text' THEN substr(replace("compensationRequestedAt", ' ', 'T'), 1, 13) ELSE strftime('%Y-%m-%dT%H', "compensationRequestedAt" / 1000, 'unixepoch') END AS h, "compensationState"
  FROM "Step" WHERE "compensationRequestedAt" IS NOT NULL
) GROUP BY h, "compensationState";

INSERT INTO "OverviewCount" ("metric", "span", "period", "key", "n")
SELECT 'duplicate_prevented', 'hour', h, '', COUNT(*) FROM (
  SELECT CASE typeof("at") WHEN 'text' THEN substr(replace("at", ' ', 'T'), 1, 13) ELSE strftime('%Y-%m-%dT%H', "at" / 1000, 'unixepoch') END AS h
  FROM "AuditEvent" WHERE "type" = 'step.reconciled' AND json_extract("data", '$.outcome') = 'CONFIRMED'
) GROUP BY h;

-- Each day's counts: the sum of its hours.
INSERT INTO "OverviewCount" ("metric", "span", "period", "key", "n")
SELECT "metric", 'day', substr("period", 1, 10), "key", SUM("n") FROM "OverviewCount" WHERE "span" = 'hour' GROUP BY 1, 3, 4;
