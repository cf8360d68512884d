/**
 * `npm start`: migrates the database (SQLite, or PostgreSQL when DATABASE_URL says so), creates the
 * demo accounts and the tool table, builds the app when the build is missing or stale, serves it, and
 * brings it to life: a worker process (with a worker token) and, on first start, the demo agent in
 * its own process, working through the API against the simulated systems the app hosts. Prints where
 * to open it and how to sign in.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { openPrisma } from "@/lib/core/db/prisma";
import { dataDirectory } from "@/lib/core/db/url";
import { ensureDemoTokens } from "@/lib/demo/seed/demo-tokens";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { World } from "@/lib/demo/sim";
import { DEMO_PASSWORD, DEMO_USERS } from "@/lib/server/users/demo-users";
import { needsBuild } from "./lib/build";

const port = process.env.PORT ?? "3000";
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const npx = process.platform === "win32" ? "npx.cmd" : "npx";
const run = (cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env) => execFileSync(cmd, args, { stdio: "inherit", env });

run(npm, ["run", "--silent", "db:migrate"]);
// Accounts and the tool table now; the demo runs come from the demo agent through the API below.
run(npm, ["run", "--silent", "db:seed"], { ...process.env, SAGABOARD_SEED_RUNS: "0" });
const stale = needsBuild();
if (stale) {
  // Next's build report (every route, its telemetry notice) is shown only when the build fails.
  console.log(`Building Sagaboard (${stale}); this takes a minute or two the first time...`);
  const started = Date.now();
  const build = spawnSync(npm, ["run", "--silent", "build"], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" } });
  if (build.status !== 0) {
    process.stderr.write(`${build.stdout ?? ""}${build.stderr ?? ""}`);
    console.error(`The build failed (exit ${build.status ?? build.signal}); its output is above.`);
    process.exit(build.status ?? 1);
  }
  console.log(`Built in ${Math.round((Date.now() - started) / 1000)} s.`);
}

// The demo's simulated systems (payments, ticketing, email, warehouse, CRM at /api/sim) are off in any
// other start. Here they are on for this process tree only: the server listens on this machine alone,
// and the simulated systems take requests only with a secret the demo agent and worker hold.
// SAGABOARD_SIM=0 keeps them off (and serves on every interface, as `next start` does).
// The server, worker and notifier log JSON lines (lib/core/observability/log.ts); their output reaches this
// terminal through a pipe, so they are told to print readable lines when this process runs in one.
const logEnv = { SAGABOARD_LOG_FORMAT: process.env.SAGABOARD_LOG_FORMAT || (process.stdout.isTTY ? "pretty" : "json") };
const simOn = process.env.SAGABOARD_SIM !== "0";
const simEnv: Record<string, string> = simOn ? { SAGABOARD_SIM: "1", SAGABOARD_SIM_SECRET: process.env.SAGABOARD_SIM_SECRET || randomBytes(24).toString("base64url") } : {};
const hostArgs = simOn ? ["-H", process.env.HOSTNAME || "127.0.0.1"] : [];

// next-auth builds its redirects from NEXTAUTH_URL; default it to the address printed below.
const baseUrl = process.env.NEXTAUTH_URL ?? `http://${simOn ? "127.0.0.1" : "localhost"}:${port}`;
const children: ChildProcess[] = [];
const server = spawn(npx, ["next", "start", "-p", port, ...hostArgs], { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, ...logEnv, ...simEnv, NEXTAUTH_URL: baseUrl, NEXT_TELEMETRY_DISABLED: "1" } });
children.push(server);
let ready = false;
// Next's start-up banner (version, addresses, "Ready in") is said once below in Sagaboard's words; its other lines pass through.
const NEXT_BANNER = /^\s*(▲ Next\.js|- Local:|- Network:|✓ Ready in|✓ Starting|✓ Running next\.config)/;
server.stdout.on("data", (chunk: Buffer) => {
  const text = chunk.toString();
  const shown = text.split("\n").filter((line) => !NEXT_BANNER.test(line));
  if (shown.some((line) => line.trim() !== "")) process.stdout.write(shown.join("\n"));
  if (!ready && text.includes("Ready")) {
    ready = true;
    void bringToLife().catch((e: unknown) => console.error(`The demo could not start: ${e instanceof Error ? e.message : String(e)}`));
  }
});

/** Starts the worker and, when the database has no runs yet, the demo agent; then prints how to sign in. */
async function bringToLife(): Promise<void> {
  const prisma = await openPrisma();
  const tools = createSupportToolRegistry(new World()).list().map((t) => t.name);
  const tokens = await ensureDemoTokens(prisma, dataDirectory(), tools);
  const firstStart = (await prisma.run.count()) === 0;
  await prisma.$disconnect();

  const url = `http://127.0.0.1:${port}`;
  const prefix = (name: string) => (chunk: Buffer) => process.stdout.write(chunk.toString().replace(/^(?=.)/gm, `[${name}] `));
  const worker = spawn(npx, ["tsx", "scripts/worker.ts"], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...logEnv, ...simEnv, SAGABOARD_URL: url, SAGABOARD_TOKEN: tokens.worker, SAGABOARD_WORKER_ID: "demo-worker" },
  });
  worker.stdout?.on("data", prefix("worker"));
  worker.stderr?.on("data", prefix("worker"));
  children.push(worker);
  // The notifier sends webhooks and email and keeps the SLAs, beside the database (lib/server/notifications).
  const notifier = spawn(npx, ["tsx", "scripts/notifier.ts"], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...logEnv, SAGABOARD_NOTIFIER_ID: "demo-notifier", SAGABOARD_PUBLIC_URL: process.env.SAGABOARD_PUBLIC_URL || baseUrl },
  });
  notifier.stdout?.on("data", prefix("notifier"));
  notifier.stderr?.on("data", prefix("notifier"));
  children.push(notifier);
  if (firstStart) {
    const agent = spawn(npx, ["tsx", "scripts/demo.ts"], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...simEnv, SAGABOARD_URL: url, SAGABOARD_TOKEN: tokens.agent } });
    agent.stdout?.on("data", prefix("agent"));
    agent.stderr?.on("data", prefix("agent"));
    children.push(agent);
  }
  console.log(`\nSagaboard is running at ${baseUrl}`);
  console.log(
    simOn
      ? "Simulated systems: ON at /api/sim (demo data only), on this machine only, for requests carrying this start's secret (the demo agent and worker hold it). SAGABOARD_SIM=0 turns them off."
      : "Simulated systems: off (SAGABOARD_SIM=0); the demo agent and worker have nothing to call.",
  );
  console.log(signInTable());
  console.log(
    firstStart
      ? "The demo agent is recording runs through the API now; one waits at its pivot for you to decide. `npm run demo` plays it again.\n"
      : "`npm run demo` plays the demo agent again.\n",
  );
}

/** How to sign in: the URL and the demo accounts (demo only: their password is public). */
function signInTable(): string {
  if (process.env.SAGABOARD_DEMO_USERS === "off") {
    return `\nSign in at ${baseUrl}/signin. Demo accounts are off; create one with\n  npm run user -- create --email you@example.com --name "Your Name" --role admin --password '...'\n`;
  }
  const width = Math.max(...DEMO_USERS.map((u) => u.email.length));
  const rows = DEMO_USERS.map((u) => `  ${u.email.padEnd(width)}  ${u.role}`);
  return [
    "",
    `Sign in at ${baseUrl}/signin with a demo account (password: ${DEMO_PASSWORD}):`,
    "",
    `  ${"email".padEnd(width)}  role`,
    ...rows,
    "",
    "Demo accounts are for trying Sagaboard only: their password is public. On a shared machine create real",
    "accounts (`npm run user -- create ...`) and disable these (`npm run user -- disable --email ...`).",
    "",
  ].join("\n");
}

for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => children.forEach((c) => c.kill(signal)));
server.on("exit", (code) => {
  children.forEach((c) => c.kill("SIGTERM"));
  process.exit(code ?? 0);
});
