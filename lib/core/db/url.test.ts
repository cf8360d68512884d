import path from "node:path";
import { describe, expect, it } from "vitest";
import { dataDirectory, databaseKindOfUrl, DEFAULT_SQLITE_PATH, postgresPoolIdleMs, postgresPoolSize, redactUrl, sqliteFilePath } from "./url";

describe("DATABASE_URL", () => {
  it("picks the store: unset or file: is SQLite, postgresql:// or postgres:// is PostgreSQL", () => {
    expect(databaseKindOfUrl(undefined)).toBe("sqlite");
    expect(databaseKindOfUrl("")).toBe("sqlite");
    expect(databaseKindOfUrl("file:./data/x.db")).toBe("sqlite");
    expect(databaseKindOfUrl("postgresql://u:p@h:5432/db")).toBe("postgresql");
    expect(databaseKindOfUrl("postgres://h/db")).toBe("postgresql");
    expect(() => databaseKindOfUrl("mysql://h/db")).toThrow(/SQLite file URL .* or a PostgreSQL URL/);
  });

  it("names a SQLite file, and refuses to treat a PostgreSQL URL as one", () => {
    expect(sqliteFilePath(undefined)).toBe(DEFAULT_SQLITE_PATH);
    expect(sqliteFilePath("file:/tmp/a.db")).toBe("/tmp/a.db");
    expect(sqliteFilePath("file:./data/x.db")).toBe(path.resolve(process.cwd(), "data/x.db"));
    expect(() => sqliteFilePath("postgresql://h/db")).toThrow(/PostgreSQL/);
  });

  it("keeps local files next to the SQLite file, or in data/ (SAGABOARD_DATA_DIR) on PostgreSQL", () => {
    expect(dataDirectory("file:/tmp/x/a.db")).toBe("/tmp/x");
    const saved = process.env.SAGABOARD_DATA_DIR;
    try {
      delete process.env.SAGABOARD_DATA_DIR;
      expect(dataDirectory("postgresql://h/db")).toBe(path.dirname(DEFAULT_SQLITE_PATH));
      process.env.SAGABOARD_DATA_DIR = "/srv/sagaboard";
      expect(dataDirectory("postgresql://h/db")).toBe("/srv/sagaboard");
    } finally {
      if (saved === undefined) delete process.env.SAGABOARD_DATA_DIR;
      else process.env.SAGABOARD_DATA_DIR = saved;
    }
  });

  it("sizes the PostgreSQL pool from DATABASE_POOL_SIZE (default 10), keeps idle connections DATABASE_POOL_IDLE_SECONDS (default 600), and masks passwords in messages", () => {
    expect(postgresPoolSize(undefined)).toBe(10);
    expect(postgresPoolSize(" ")).toBe(10);
    expect(postgresPoolSize("25")).toBe(25);
    expect(() => postgresPoolSize("0")).toThrow(/DATABASE_POOL_SIZE/);
    expect(() => postgresPoolSize("ten")).toThrow(/DATABASE_POOL_SIZE/);
    expect(postgresPoolIdleMs(undefined)).toBe(600_000);
    expect(postgresPoolIdleMs("0")).toBe(0);
    expect(postgresPoolIdleMs("30")).toBe(30_000);
    expect(() => postgresPoolIdleMs("-1")).toThrow(/DATABASE_POOL_IDLE_SECONDS must be a whole number of seconds/);
    expect(() => postgresPoolIdleMs("1.5")).toThrow(/DATABASE_POOL_IDLE_SECONDS/);
    expect(redactUrl("postgresql://user:s3cret@db:5432/x")).toBe("postgresql://user:***@db:5432/x");
    expect(redactUrl("postgresql://db/x")).toBe("postgresql://db/x");
  });
});
