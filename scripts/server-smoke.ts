/**
 * A smoke of the built server on whatever Node.js runs this script (`.ci/node-versions` runs it on
 * Node 24): `next start` from the existing build (`npm run e2e:build` or `npm run build` makes it)
 * on a throwaway PostgreSQL database, then the pages and API answers a newcomer meets first. Exits
 * non-zero, saying what failed, when any answer is not the expected one.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import path from "node:path";
import { postgresTestDatabase, TEST_DATABASE_PREFIX, testPostgresUrl } from "@/tests/support/test-database";
import { buildDir } from "./lib/build";

if (!existsSync(path.join(buildDir(), "BUILD_ID"))) {
  console.error("server-smoke: no build in .next; run `npm run build` (or `npm run e2e:build`) first.");
  process.exit(2);
}
const port = String(3290 + Math.floor(Math.random() * 50));
const base = `http://localhost:${port}`;
const name = `${TEST_DATABASE_PREFIX}smoke_${randomBytes(3).toString("hex")}`;
const database = postgresTestDatabase(name, { shared: false });
await database.create();
const server = spawn(process.execPath, [path.join("node_modules", "next", "dist", "bin", "next"), "start", "-p", port], {
  stdio: ["ignore", "inherit", "inherit"],
  env: { ...process.env, DATABASE_URL: testPostgresUrl(name), NEXTAUTH_URL: base, NEXTAUTH_SECRET: randomBytes(32).toString("base64url") },
});

/** The status and body of GET `path`. */
async function get(p: string): Promise<{ status: number; body: string }> {
  const res = await fetch(new URL(p, base), { redirect: "manual" });
  return { status: res.status, body: await res.text() };
}

let failed = false;
try {
  const deadline = Date.now() + 120_000;
  while ((await get("/api/health").catch(() => ({ status: 0, body: "" }))).status !== 200) {
    if (server.exitCode !== null || Date.now() > deadline) throw new Error(`the server did not answer /api/health (exit ${server.exitCode})`);
    await new Promise((r) => setTimeout(r, 250));
  }
  const checks: Array<[string, number, RegExp]> = [
    ["/api/health", 200, /"ok":true/],
    ["/signin", 200, /Sign in/i],
    ["/api/v1/tools", 401, /UNAUTHORIZED/],
    ["/runs", 307, /.*/],
  ];
  for (const [p, status, body] of checks) {
    const answer = await get(p);
    const ok = answer.status === status && body.test(answer.body);
    failed ||= !ok;
    console.log(`server-smoke: Node ${process.version}: GET ${p} answered ${answer.status}${ok ? "" : ` (expected ${status} matching ${body}): ${answer.body.slice(0, 200)}`}`);
  }
} catch (e) {
  failed = true;
  console.error(`server-smoke: ${e instanceof Error ? e.message : String(e)}`);
} finally {
  server.kill("SIGTERM");
  await new Promise((r) => server.once("exit", r));
  await database.drop().catch(() => undefined);
}
process.exit(failed ? 1 : 0);
