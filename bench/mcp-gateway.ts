/**
 * `npm run bench:mcp`: what the MCP gateway costs a client, side by side in one run, at 1, 8 and 32
 * concurrent clients (each its own MCP session, so its own run):
 *   - direct: the SDK client to the MCP server (streamable HTTP);
 *   - a bare proxy (bench/lib/mcp-bare-proxy.mjs): a second process on the same SDK forwarding the
 *     call and doing nothing else, the floor of any gateway process;
 *   - a reviewed read-only tool (PURE) through the gateway: passed through, nothing logged;
 *   - a saga-logged write through the gateway: intent, call, outcome (a COMPENSATABLE tool with its
 *     lookup and compensator, so it stages without a hold), and how many calls the server ran a write;
 *   - the in-process gateway (`throughSagaboard`, no second process): the same read and write;
 *   - the raw two-commit floor on the same SQLite (one commit for an intent, one for an outcome).
 * Sagaboard is the built app (`next start`, built first when stale) on a throwaway SQLite file.
 * Flags: --calls N (2000 per cell; --quick: 200); --clients N (one concurrency level); --outcome-linger-ms N passes the gateway's flag (a
 * write's outcome then goes to Sagaboard with the session's next call). Not part of `npm test`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { openPrisma } from "@/lib/core/db/prisma";
import { createAgentToken } from "@/lib/server/tokens/create-agent-token";
import { fmt, flag, hasFlag, percentiles, printTable, throwaway, writeResults } from "./lib/common";
import { RawSqlite } from "./lib/dispatch";
import { buildIfStale, startApp } from "./lib/http";
import { throughSagaboard } from "@/packages/mcp-gateway/src/in-process";

const quick = hasFlag("quick");
const CALLS = flag("calls", quick ? 200 : 2000);
/** `--clients N`: only that concurrency (1, 8 and 32 by default). */
const LEVELS = hasFlag("clients") ? [flag("clients", 1)] : [1, 8, 32];
const LINGER = flag("outcome-linger-ms", 0);
const ROOT = process.cwd();
const children: ChildProcess[] = [];

function launch(command: string, args: string[], env: Record<string, string>, ready: RegExp): Promise<ChildProcess> {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let out = "";
  return new Promise((resolve, reject) => {
    const seen = (d: Buffer) => {
      out += d.toString();
      if (ready.test(out)) resolve(child);
    };
    child.stdout!.on("data", seen);
    child.stderr!.on("data", seen);
    child.on("exit", (code) => reject(new Error(`${args.join(" ")} exited ${code}:\n${out}`)));
  });
}

/** The bearer the bench's gateway gives its clients. */
const CLIENT_SECRET = randomBytes(24).toString("base64url");

async function clients(url: string, n: number, bearer?: string): Promise<Client[]> {
  return Promise.all(
    Array.from({ length: n }, async () => {
      const client = new Client({ name: "bench", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(url), bearer ? { requestInit: { headers: { authorization: `Bearer ${bearer}` } } } : {}));
      return client;
    }),
  );
}

/** Clients each with its own in-process gateway in front of the server (no second process). */
async function inProcessClients(upstreamUrl: string, sagaboard: { baseUrl: string; token: string }, n: number): Promise<Client[]> {
  return Promise.all(
    Array.from({ length: n }, async () => {
      const client = new Client({ name: "bench-in-process", version: "1.0.0" });
      await client.connect(
        await throughSagaboard({ sagaboard: { ...sagaboard, outcomeLingerMs: LINGER }, upstream: new StreamableHTTPClientTransport(new URL(upstreamUrl)), name: "counter-server", lookupsByKey: { write: "find" }, holdWaitMs: 0, tableCacheMs: 600_000 }),
      );
      return client;
    }),
  );
}

/** The server's calls so far, by tool. */
async function serverCalls(upstreamUrl: string): Promise<{ total: number; duplicates: number; calls: Record<string, number> }> {
  const check = new Client({ name: "bench-check", version: "1.0.0" });
  await check.connect(new StreamableHTTPClientTransport(new URL(upstreamUrl)));
  const counted = (await check.callTool({ name: "read", arguments: {} })).structuredContent as { total: number; duplicates: number; calls: Record<string, number> };
  await check.close();
  return counted;
}

/** `total` calls split over the clients, each client's calls one after another; latencies in ms. */
async function cell(cs: Client[], total: number, call: (c: Client, i: number) => Promise<unknown>): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  await Promise.all(
    cs.map(async (c) => {
      for (let i = next++; i < total; i = next++) {
        const t = performance.now();
        const answer = (await call(c, i)) as { isError?: boolean; content?: { text?: string }[] };
        if (answer.isError) throw new Error(`call ${i} answered an error: ${answer.content?.[0]?.text}`);
        latencies.push(performance.now() - t);
      }
    }),
  );
  return latencies;
}

async function main(): Promise<void> {
  const db = await throwaway("sqlite", "mcp");
  buildIfStale();
  const sagaboard = await startApp(db.url, 38_000 + (process.pid % 500));
  const prisma = await openPrisma(db.url);
  const ns = `bench${Date.now().toString(36)}`;
  const { secret } = await createAgentToken(prisma, { name: ns, tools: [], createdBy: "system:bench" });

  const upstreamPort = 39_000 + (process.pid % 500);
  const gatewayPort = upstreamPort + 600;
  await launch(process.execPath, [path.join(ROOT, "bench/lib/mcp-counter-server.mjs")], { PORT: String(upstreamPort) }, /listening/);
  const upstreamUrl = `http://127.0.0.1:${upstreamPort}/mcp`;
  const proxyPort = upstreamPort + 300;
  await launch(process.execPath, [path.join(ROOT, "bench/lib/mcp-bare-proxy.mjs")], { PORT: String(proxyPort), UPSTREAM: upstreamUrl }, /listening/);
  const stateDir = mkdtempSync(path.join(tmpdir(), "bench-mcp-"));
  writeFileSync(path.join(stateDir, "client-tokens"), `bench:${CLIENT_SECRET}\n`, { mode: 0o600 });
  await launch(
    process.execPath,
    ["--import", "tsx", path.join(ROOT, "packages/mcp-gateway/src/cli.ts"), "--url", sagaboard.url, "--listen", String(gatewayPort), "--state-dir", stateDir,
      "--client-token-file", path.join(stateDir, "client-tokens"), "--upstream-url", upstreamUrl, "--lookup-by-key", "write=find", "--hold-wait-ms", "0", "--table-cache-ms", "600000",
      "--outcome-linger-ms", String(LINGER)],
    { SAGABOARD_TOKEN: secret },
    /MCP over streamable HTTP/,
  );
  // The admin's review, written straight to the table (the edit use case needs a signed-in person):
  // read is read-only; write stages, answered by undo and looked up by find.
  const review = (name: string, data: Record<string, unknown>) =>
    prisma.toolPolicy.update({ where: { name }, data: { status: "REVIEWED", policyVersion: { increment: 1 }, correctionSubject: null, correctionBody: null, ...data } });
  await review(`${ns}.read`, { toolClass: "PURE", owner: null });
  await review(`${ns}.write`, { toolClass: "COMPENSATABLE", compensator: `${ns}.undo`, revocationWindowSec: 86_400 });

  const floorDb = await throwaway("sqlite", "mcp-floor");
  const floor = new RawSqlite(floorDb.url);
  const floorRound = await floor.round(CALLS);
  const floorP50 = percentiles(floorRound.latencies).p50;

  const rows: string[][] = [
    ["clients", "direct read p50/p99", "bare proxy read p50/p99", "proxy ratio p50/p99", "gateway read p50/p99", "read vs proxy p50", "in-process read p50/p99", "in-process vs direct p50", "direct write p50/p99", "logged write p50/p99", "write p50 - direct", "write p50 / direct", "in-process write p50/p99", "upstream calls a write", "2 commits + 1 ms"],
  ];
  const results: Record<string, unknown>[] = [];
  let n = 0;
  for (const level of LEVELS) {
    const direct = await clients(upstreamUrl, level);
    const through = await clients(`http://127.0.0.1:${gatewayPort}/mcp`, level, CLIENT_SECRET);
    const proxied = await clients(`http://127.0.0.1:${proxyPort}/mcp`, level);
    const inProcess = await inProcessClients(upstreamUrl, { baseUrl: sagaboard.url, token: secret }, level);
    const read = (c: Client) => c.callTool({ name: "read", arguments: {} });
    const write = (c: Client, i: number) => c.callTool({ name: "write", arguments: { n: n * 1_000_000 + i } });
    // Warm both paths (sessions' runs, the gateway's table copy) outside the measurement.
    await cell(direct, level * 3, read);
    await cell(through, level * 3, read);
    await cell(proxied, level * 3, read);
    await cell(inProcess, level * 3, read);
    await cell(through, level, (c, i) => write(c, 900_000 + i));
    await cell(inProcess, level, (c, i) => write(c, 800_000 + i));
    const dr = percentiles(await cell(direct, CALLS, read));
    const pr = percentiles(await cell(proxied, CALLS, read));
    const gr = percentiles(await cell(through, CALLS, read));
    const ir = percentiles(await cell(inProcess, CALLS, read));
    n++;
    const dw = percentiles(await cell(direct, CALLS, write));
    n++;
    const before = await serverCalls(upstreamUrl);
    const gw = percentiles(await cell(through, CALLS, write));
    const after = await serverCalls(upstreamUrl);
    const perWrite = (["write", "find", "undo"] as const).reduce((sum, tool) => sum + ((after.calls[tool] ?? 0) - (before.calls[tool] ?? 0)), 0) / CALLS;
    n++;
    const iw = percentiles(await cell(inProcess, CALLS, write));
    await Promise.all([...direct, ...through, ...proxied, ...inProcess].map((c) => c.close()));
    rows.push([
      String(level),
      `${fmt(dr.p50)} / ${fmt(dr.p99)}`,
      `${fmt(pr.p50)} / ${fmt(pr.p99)}`,
      `${fmt(pr.p50 / dr.p50, 2)}x / ${fmt(pr.p99 / dr.p99, 2)}x`,
      `${fmt(gr.p50)} / ${fmt(gr.p99)}`,
      `${fmt(gr.p50 / pr.p50, 2)}x`,
      `${fmt(ir.p50)} / ${fmt(ir.p99)}`,
      `${fmt(ir.p50 / dr.p50, 2)}x`,
      `${fmt(dw.p50)} / ${fmt(dw.p99)}`,
      `${fmt(gw.p50)} / ${fmt(gw.p99)}`,
      fmt(gw.p50 - dw.p50),
      `${fmt(gw.p50 / dw.p50, 2)}x`,
      `${fmt(iw.p50)} / ${fmt(iw.p99)}`,
      fmt(perWrite, 2),
      fmt(floorP50 + 1),
    ]);
    results.push({ clients: level, directRead: dr, bareProxyRead: pr, gatewayRead: gr, inProcessRead: ir, directWrite: dw, loggedWrite: gw, inProcessWrite: iw, upstreamCallsPerWrite: perWrite, twoCommitP50: floorP50 });
  }
  const counted = await serverCalls(upstreamUrl);
  const logged = await prisma.step.count({ where: { tool: `${ns}.write` } });
  printTable(`MCP gateway overhead, ms per call (${CALLS} calls a cell; two-commit floor p50 ${fmt(floorP50)} ms; outcome linger ${LINGER} ms)`, rows);
  console.log(`\nEffects on the server: ${counted.total}, keys with more than one effect: ${counted.duplicates}; steps logged for write: ${logged}.`);
  console.log(`Results: ${writeResults("mcp-gateway", { calls: CALLS, results, effects: counted, logged })}`);
  floor.db.close();
  await prisma.$disconnect();
  sagaboard.stop();
  await floorDb.drop();
  await db.drop();
}

main()
  .catch((e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  })
  .finally(() => {
    for (const child of children) child.kill("SIGTERM");
  });
