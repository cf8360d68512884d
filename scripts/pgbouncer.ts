/**
 * `npm run pgbouncer -- start | stop | run -- COMMAND...`: PgBouncer (Debian's package, 1.18) in
 * transaction mode in front of a PostgreSQL server, the way managed PostgreSQL is run at scale, so
 * Sagaboard can be run and tested through it.
 *
 * - `start` writes a configuration under `--dir` (default: a folder per port in the system's temp dir), starts
 *   PgBouncer on 127.0.0.1:`--port` (default 6433) in front of `--upstream` (default
 *   SAGABOARD_TEST_PG_URL or postgresql://postgres@127.0.0.1:5432/postgres), and prints the two URLs
 *   to give Sagaboard: DATABASE_URL through the pooler (`?pgbouncer=true`, so no statement outlives a
 *   transaction) and DATABASE_DIRECT_URL for `npm run db:migrate`.
 * - `stop` stops the PgBouncer that `start` left in `--dir`.
 * - `run -- COMMAND...` starts one, runs the command with SAGABOARD_TEST_PG_POOLER_URL set (the test
 *   suites then connect through the pooler and migrate directly), and stops it.
 *
 * Authentication is PgBouncer's `trust` toward the local server's own trust setup: a harness for this
 * machine and CI, not a production configuration (that one names auth_type scram-sha-256 and a
 * userlist). PgBouncer refuses to run as root, so as root it runs as the `postgres` user.
 */
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { postgresTarget } from "@/lib/core/db/url";

const argv = process.argv.slice(2);
const command = argv[0];
const option = (name: string, fallback: string): string => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] ? argv[i + 1]! : fallback;
};
const PORT = Number(option("port", "6433"));
const DIR = path.resolve(option("dir", path.join(os.tmpdir(), `sagaboard-pgbouncer-${PORT}`)));
const UPSTREAM = new URL(option("upstream", process.env.SAGABOARD_TEST_PG_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres"));
const BINARY = ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"].find((p) => existsSync(p));

function fail(message: string): never {
  console.error(`pgbouncer: ${message}`);
  process.exit(2);
}

/** The URL of `database` through the pooler. */
function pooledUrl(database = UPSTREAM.pathname.slice(1) || "postgres"): string {
  const url = new URL(UPSTREAM.toString());
  url.hostname = "127.0.0.1";
  url.port = String(PORT);
  url.pathname = `/${database}`;
  url.searchParams.set("pgbouncer", "true");
  return url.toString();
}

/** PgBouncer's own command, as the `postgres` user when this process is root (it refuses root). */
function asServiceUser(args: string[]): [string, string[]] {
  if (process.getuid?.() !== 0) return [BINARY!, args];
  return ["runuser", ["-u", "postgres", "--", BINARY!, ...args]];
}

function isRunning(): boolean {
  const pidFile = path.join(DIR, "pgbouncer.pid");
  if (!existsSync(pidFile)) return false;
  try {
    process.kill(Number(readFileSync(pidFile, "utf8").trim()), 0);
    return true;
  } catch {
    return false;
  }
}

async function start(): Promise<void> {
  if (!BINARY) fail("PgBouncer is not installed. On Debian: apt-get install -y pgbouncer (the CI script installs it).");
  if (!Number.isInteger(PORT) || PORT < 1 || PORT > 65_535) fail(`--port must be a TCP port (got ${option("port", "")}).`);
  if (isRunning()) {
    console.log(`pgbouncer: already running from ${DIR}`);
    return;
  }
  mkdirSync(DIR, { recursive: true });
  const user = decodeURIComponent(UPSTREAM.username || "postgres");
  // `* =`: every database of the server, so the test suites' throwaway databases are reachable as they are made.
  // max_client_conn: every test process's pool (DATABASE_POOL_SIZE) at once; default_pool_size: server connections per database and user.
  writeFileSync(
    path.join(DIR, "pgbouncer.ini"),
    [
      "[databases]",
      `* = host=${UPSTREAM.hostname} port=${UPSTREAM.port || "5432"}`,
      "",
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${PORT}`,
      "unix_socket_dir =",
      "auth_type = trust",
      `auth_file = ${path.join(DIR, "userlist.txt")}`,
      "pool_mode = transaction",
      "max_client_conn = 2000",
      "default_pool_size = 20",
      "max_db_connections = 40",
      "server_reset_query =",
      // pg sends these at connect; PgBouncer refuses startup parameters it does not know unless told to ignore them.
      "ignore_startup_parameters = extra_float_digits,options,search_path,statement_timeout",
      `logfile = ${path.join(DIR, "pgbouncer.log")}`,
      `pidfile = ${path.join(DIR, "pgbouncer.pid")}`,
      "",
    ].join("\n"),
  );
  writeFileSync(path.join(DIR, "userlist.txt"), `"${user}" ""\n`);
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
    for (const f of ["", "pgbouncer.ini", "userlist.txt"]) chownSync(path.join(DIR, f), uid, gid);
  }
  chmodSync(DIR, 0o755);
  const [cmd, args] = asServiceUser(["-d", path.join(DIR, "pgbouncer.ini")]);
  try {
    execFileSync(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
  } catch (e) {
    const log = existsSync(path.join(DIR, "pgbouncer.log")) ? readFileSync(path.join(DIR, "pgbouncer.log"), "utf8").split("\n").slice(-5).join("\n") : "";
    fail(`PgBouncer did not start: ${String((e as { stderr?: Buffer }).stderr ?? e)}${log}`);
  }
  // Ready when it accepts a connection.
  const { default: pg } = await import("pg");
  const deadline = Date.now() + 10_000;
  for (;;) {
    const client = new pg.Client({ connectionString: postgresTarget(pooledUrl()).connectionString });
    try {
      await client.connect();
      await client.query("SELECT 1");
      await client.end();
      break;
    } catch (e) {
      await client.end().catch(() => undefined);
      if (Date.now() > deadline) fail(`PgBouncer started but does not answer on 127.0.0.1:${PORT}: ${(e as Error).message}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  console.log(`pgbouncer: transaction mode on 127.0.0.1:${PORT}, in front of ${UPSTREAM.hostname}:${UPSTREAM.port || "5432"} (config and log in ${DIR})`);
  console.log(`  DATABASE_URL=${pooledUrl("sagaboard")}`);
  console.log(`  DATABASE_DIRECT_URL=${new URL(`/sagaboard`, UPSTREAM).toString()}`);
}

function stop(): void {
  const pidFile = path.join(DIR, "pgbouncer.pid");
  if (!isRunning()) {
    console.log(`pgbouncer: none running from ${DIR}`);
    return;
  }
  process.kill(Number(readFileSync(pidFile, "utf8").trim()), "SIGTERM");
  console.log("pgbouncer: stopped");
}

async function run(): Promise<void> {
  const at = argv.indexOf("--");
  const rest = at >= 0 ? argv.slice(at + 1) : [];
  if (rest.length === 0) fail("run needs a command after --, e.g. npm run pgbouncer -- run -- npx vitest run");
  await start();
  const child = spawn(rest[0]!, rest.slice(1), { stdio: "inherit", env: { ...process.env, SAGABOARD_TEST_PG_POOLER_URL: pooledUrl() } });
  const code = await new Promise<number>((resolve) => child.on("exit", (c, signal) => resolve(c ?? (signal ? 1 : 0))));
  stop();
  process.exit(code);
}

if (command === "start") await start();
else if (command === "stop") stop();
else if (command === "run") await run();
else fail("use: npm run pgbouncer -- start | stop | run -- COMMAND... [--port 6433] [--dir DIR] [--upstream postgresql://...]");
