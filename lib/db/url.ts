import path from "node:path";

/** Where the SQLite database lives when DATABASE_URL does not say: under the project, in data/. */
export const DEFAULT_SQLITE_PATH = path.join(process.cwd(), "data", "sagaboard.db");

/** The SQLite file named by DATABASE_URL (`file:./data/x.db`), or the default. */
export function sqliteFilePath(url: string | undefined = process.env.DATABASE_URL): string {
  if (!url) return DEFAULT_SQLITE_PATH;
  if (!url.startsWith("file:")) {
    throw new Error(
      `DATABASE_URL must be a SQLite file URL such as file:./data/sagaboard.db (got "${url.split(":")[0]}:..."); ` +
        "PostgreSQL support is a separate piece of work.",
    );
  }
  const file = url.slice("file:".length);
  return path.isAbsolute(file) ? file : path.resolve(process.cwd(), file);
}
