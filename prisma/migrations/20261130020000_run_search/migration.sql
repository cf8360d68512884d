-- The runs list's case-insensitive substring search on SQLite (lib/db/dialect.ts runSearchCandidates):
-- a trigram full-text index over Run.onBehalfOf, kept in step with Run by triggers. LIKE '%...%' on
-- Run itself can use no index, so at 100k runs a search read every run (about 11 ms each call).
-- PostgreSQL has its pg_trgm index instead (20261129030000_dashboard_indexes). Prisma's datamodel
-- cannot express either; tests/integration/schema-drift.test.ts knows these tables.
CREATE VIRTUAL TABLE "RunSearch" USING fts5("onBehalfOf", "runId" UNINDEXED, tokenize = 'trigram');

CREATE TRIGGER "Run_search_insert" AFTER INSERT ON "Run" WHEN NEW."onBehalfOf" IS NOT NULL BEGIN
  INSERT INTO "RunSearch" ("onBehalfOf", "runId") VALUES (NEW."onBehalfOf", NEW."id");
END;

-- Runs keep their id and customer; these two keep the index right should that ever change.
CREATE TRIGGER "Run_search_update" AFTER UPDATE OF "onBehalfOf", "id" ON "Run" BEGIN
  DELETE FROM "RunSearch" WHERE "runId" = OLD."id";
  INSERT INTO "RunSearch" ("onBehalfOf", "runId") SELECT NEW."onBehalfOf", NEW."id" WHERE NEW."onBehalfOf" IS NOT NULL;
END;

CREATE TRIGGER "Run_search_delete" AFTER DELETE ON "Run" BEGIN
  DELETE FROM "RunSearch" WHERE "runId" = OLD."id";
END;

INSERT INTO "RunSearch" ("onBehalfOf", "runId") SELECT "onBehalfOf", "id" FROM "Run" WHERE "onBehalfOf" IS NOT NULL;
