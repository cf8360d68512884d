/**
 * Another process holding a SQLite file's write lock, for the fault suites: a child node process
 * opens the file with better-sqlite3, takes the write lock (`BEGIN IMMEDIATE`) and keeps it until
 * told to let go, as a seed script or a stuck second writer would. It must be another process:
 * better-sqlite3 waits for a lock synchronously, so a holder inside the test process could never
 * release while the app's connection waits on it.
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

/** A held lock. */
export interface SqliteLock {
  /** Commits the holder's (empty) transaction and ends the process. */
  release(): Promise<void>;
}

const HOLDER = `
const Database = require("better-sqlite3");
const db = new Database(process.argv[1], { timeout: 10000 });
db.exec("BEGIN IMMEDIATE");
console.log("locked");
process.stdin.on("data", () => { db.exec("COMMIT"); db.close(); console.log("released"); process.exit(0); });
`;

/** Takes the write lock of the SQLite file at `file` in a child process; resolves once it holds it. */
export async function lockSqliteFile(file: string): Promise<SqliteLock> {
  const child = spawn(process.execPath, ["-e", HOLDER, file], { stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const lines = createInterface({ input: child.stdout });
  const next = () =>
    new Promise<string>((resolve, reject) => {
      const onLine = (line: string) => {
        lines.off("line", onLine);
        resolve(line);
      };
      lines.on("line", onLine);
      child.once("exit", (code) => reject(new Error(`the lock holder exited ${code}: ${stderr}`)));
    });
  const locked = await next();
  if (locked !== "locked") throw new Error(`the lock holder said ${locked}`);
  return {
    release: async () => {
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      child.stdin.write("go\n");
      await exited;
    },
  };
}
