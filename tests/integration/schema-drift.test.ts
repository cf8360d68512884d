/**
 * The two providers' schemas and migrations cannot drift:
 * - prisma/postgres/schema.prisma is exactly what scripts/prisma-pg-schema.ts derives from
 *   prisma/schema.prisma now (run `npm run db:pg-schema` after editing the models);
 * - applying prisma/migrations to an empty SQLite file builds the same tables, columns, indexes and
 *   foreign keys as the SQLite datamodel does (Prisma's own `migrate diff --from-empty` script);
 * - in the PostgreSQL run (SAGABOARD_TEST_PG=1), the same for prisma/postgres/migrations against
 *   the derived PostgreSQL datamodel, on two throwaway databases.
 * Comparing the catalogs of two real databases (rather than SQL text) works for any number of
 * migrations and needs no schema engine connection (which is not available offline on PostgreSQL).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { migrateSqlite } from "@/lib/core/db/migrate";
import { expectedPostgresSchema, PARTIAL_INDEXES, POSTGRES_ONLY_INDEXES, POSTGRES_SCHEMA, SQLITE_ONLY_TABLES, SQLITE_SCHEMA } from "@/scripts/prisma-pg-schema";
import { createTestDatabase, reserveTestDatabase, testStoreKind } from "../support/test-database";

const dir = mkdtempSync(path.join(os.tmpdir(), "sagaboard-drift-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The SQL Prisma would run to build `schema`'s datamodel from nothing (offline: no database needed). */
function scriptFromDatamodel(schema: string): string {
  const prisma = path.join(process.cwd(), "node_modules", ".bin", "prisma");
  return execFileSync(prisma, ["migrate", "diff", "--from-empty", "--to-schema-datamodel", schema, "--script"], {
    encoding: "utf8",
    env: { ...process.env, CHECKPOINT_DISABLE: "1", PRISMA_HIDE_UPDATE_MESSAGE: "1" },
    stdio: ["ignore", "pipe", "pipe"], // the CLI says "Loaded Prisma config..." on stderr
  });
}

/** Tables, columns, indexes and foreign keys of a SQLite file, in a form independent of creation order. */
function sqliteCatalog(file: string): unknown {
  const db = new Database(file, { readonly: true });
  try {
    const tables = db
      .prepare<[], { name: string }>(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT IN ('_prisma_migrations', 'sqlite_sequence') ORDER BY name",
      )
      .all()
      .map((t) => t.name);
    return tables.map((table) => ({
      table,
      columns: db
        .prepare(`SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?) ORDER BY name`)
        .all(table),
      // Primary keys are in `columns` (pk); their automatic index's name depends on the table's history.
      indexes: db
        .prepare<[string], { name: string; unique: number; partial: number }>(
          `SELECT name, "unique", partial FROM pragma_index_list(?) WHERE origin <> 'pk' ORDER BY name`,
        )
        .all(table)
        .map((i) => ({ ...i, columns: db.prepare(`SELECT name FROM pragma_index_info(?) ORDER BY seqno`).all(i.name) })),
      foreignKeys: db
        .prepare(`SELECT "table", "from", "to", on_update, on_delete FROM pragma_foreign_key_list(?) ORDER BY "from"`)
        .all(table),
    }));
  } finally {
    db.close();
  }
}

/** The same for a PostgreSQL database's public schema. */
async function postgresCatalog(url: string): Promise<unknown> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const columns = await client.query(
      `SELECT table_name, column_name, data_type, udt_name, is_nullable, column_default, character_maximum_length, datetime_precision
         FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> '_prisma_migrations'
        ORDER BY table_name, column_name`,
    );
    const indexes = await client.query(
      `SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename <> '_prisma_migrations' ORDER BY indexname`,
    );
    const constraints = await client.query(
      `SELECT c.conrelid::regclass::text AS table_name, c.conname, c.contype, pg_get_constraintdef(c.oid) AS definition
         FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
        WHERE n.nspname = 'public' AND c.conrelid::regclass::text <> '_prisma_migrations'
        ORDER BY c.conname`,
    );
    return { columns: columns.rows, indexes: indexes.rows, constraints: constraints.rows };
  } finally {
    await client.end();
  }
}

describe("one source of truth for the models", () => {
  it(`${POSTGRES_SCHEMA} is what \`npm run db:pg-schema\` derives from ${SQLITE_SCHEMA} now`, () => {
    const committed = readFileSync(path.join(process.cwd(), POSTGRES_SCHEMA), "utf8");
    expect(committed, `${POSTGRES_SCHEMA} is stale: run \`npm run db:pg-schema\` and commit it`).toBe(expectedPostgresSchema());
  });

  it("each migrations folder is locked to its provider", () => {
    expect(readFileSync(path.join(process.cwd(), "prisma", "migrations", "migration_lock.toml"), "utf8")).toMatch(/provider = "sqlite"/);
    expect(readFileSync(path.join(process.cwd(), "prisma", "postgres", "migrations", "migration_lock.toml"), "utf8")).toMatch(
      /provider = "postgresql"/,
    );
  });

  it("applying prisma/migrations builds exactly the SQLite datamodel", () => {
    const migrated = path.join(dir, "migrated.db");
    expect(migrateSqlite(migrated).applied.length).toBeGreaterThan(0);
    const fromModel = path.join(dir, "from-model.db");
    const db = new Database(fromModel);
    db.exec(scriptFromDatamodel(SQLITE_SCHEMA));
    db.close();
    const expected = sqliteCatalog(fromModel);
    expect((expected as unknown[]).length).toBeGreaterThan(0);
    // The hand-written search index the datamodel cannot express: present after the migrations, else not compared.
    const handWritten = new Set(SQLITE_ONLY_TABLES.map((t) => t.name));
    const built = sqliteCatalog(migrated) as { table: string; indexes: { name: string; partial: number }[] }[];
    expect(built.map((t) => t.table).filter((name) => handWritten.has(name)).sort()).toEqual([...handWritten].sort());
    // The partial indexes the datamodel cannot express: present (and partial) after the migrations, else not compared.
    const partial = new Set(PARTIAL_INDEXES.map((i) => i.name));
    expect(built.flatMap((t) => t.indexes.filter((i) => partial.has(i.name) && i.partial === 1).map((i) => i.name)).sort()).toEqual([...partial].sort());
    for (const t of built) t.indexes = t.indexes.filter((i) => !partial.has(i.name));
    expect(
      built.filter((t) => !handWritten.has(t.table)),
      "prisma/migrations do not build prisma/schema.prisma: add a migration",
    ).toEqual(expected);
  }, 60_000);
});

// Needs a PostgreSQL server: part of the PostgreSQL run only.
if (testStoreKind() === "postgresql") {
  describe("one source of truth for the models: PostgreSQL", () => {
    it("applying prisma/postgres/migrations builds exactly the PostgreSQL datamodel", async () => {
      const migrated = await createTestDatabase("drift", "postgresql");
      const fromModel = reserveTestDatabase("drift", "postgresql");
      try {
        await fromModel.create({ migrate: false });
        const client = new pg.Client({ connectionString: fromModel.directUrl });
        await client.connect();
        try {
          await client.query(scriptFromDatamodel(POSTGRES_SCHEMA));
        } finally {
          await client.end();
        }
        const expected = (await postgresCatalog(fromModel.url)) as { columns: unknown[] };
        expect(expected.columns.length).toBeGreaterThan(0);
        // The hand-written indexes the datamodel cannot express: present after the migrations, else not compared.
        const handWritten = new Set([...POSTGRES_ONLY_INDEXES, ...PARTIAL_INDEXES].map((i) => i.name));
        const built = (await postgresCatalog(migrated.url)) as { indexes: { indexname: string }[] };
        expect(built.indexes.map((i) => i.indexname).filter((name) => handWritten.has(name)).sort()).toEqual([...handWritten].sort());
        built.indexes = built.indexes.filter((i) => !handWritten.has(i.indexname));
        expect(built, "prisma/postgres/migrations do not build prisma/postgres/schema.prisma: add a migration").toEqual(expected);
      } finally {
        await migrated.drop();
        await fromModel.drop();
      }
    }, 60_000);
  });
}
