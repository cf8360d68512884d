/**
 * `npx tsx --import ./bench/lib/register-css.mjs bench/audit-export.ts [--events N] [--store sqlite|postgresql]
 * [--keep] [--reuse URL]`: the
 * audit log at scale. Fills a throwaway database with N audit events (default 1,000,000) in valid hash
 * chains (runs of 50 events, 100 of them interleaved at a time, as concurrent runs write them; a few
 * people and the worker among the actors), with raw SQL inserts in one transaction. Then measures, each
 * in a fresh child process (so its peak RSS is the measured call's, not the fill's), through the same
 * lib functions the routes call, as a signed-in viewer:
 * - exporting everything as CSV and as JSON lines (the stream read to the end), and a selective filter;
 * - the first page of the log: unfiltered, by run, by a rare actor (the bounded window), by time;
 * - verifying every chain; exporting the chain heads; checking them.
 * Prints time and peak RSS per measurement and writes bench/results/<timestamp>-audit.json.
 * Not part of `npm test`.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import pg from "pg";
import { checkChainHeads } from "@/lib/desks/audit/check-chain-heads";
import { exportAuditEvents } from "@/lib/desks/audit/export-audit-events";
import { exportChainHeads } from "@/lib/desks/audit/export-chain-heads";
import { findAuditEvents } from "@/lib/desks/audit/find-audit-events";
import { verifyAuditChains } from "@/lib/desks/audit/verify-audit-chains";
import { requireUser, runWithSessionReader } from "@/lib/server/auth/current-user";
import { chainLink } from "@/lib/core/db/audit-chain";
import { openPrisma, useProcessPrisma } from "@/lib/core/db/prisma";
import type { DatabaseKind } from "@/lib/core/db/url";
import type { Json } from "@/packages/client/src/saga/tools";
import { fileOf, flag, fmt, hasFlag, printTable, throwaway, writeResults } from "./lib/common";

const VIEWER_ID = "usr_bench_audit_viewer";
const EVENTS_PER_RUN = 50;
const CONCURRENT_RUNS = 100;
const argValue = (name: string) => (process.argv.includes(`--${name}`) ? process.argv[process.argv.indexOf(`--${name}`) + 1] : undefined);

/** The columns of an AuditEvent insert, in order. */
const COLUMNS = ["scope", "seq", "runId", "stepId", "type", "actor", "data", "at", "prevHash", "hash"] as const;
type Row = (string | number | null)[];

/** N events in valid chains, in append order, a batch at a time. */
function* events(total: number, batch: number): Generator<Row[]> {
  const start = Date.UTC(2026, 8, 1);
  let clock = start;
  let out: Row[] = [];
  let runNo = 0;
  let written = 0;
  while (written < total) {
    // A group of runs written concurrently: their events interleave round-robin.
    const group = Array.from({ length: CONCURRENT_RUNS }, () => {
      const runId = `run_${(runNo++).toString(36).padStart(8, "0")}`;
      return { runId, agent: `agent:support-agent-${runNo % 20}`, last: undefined as { seq: number; hash: string } | undefined, step: 0 };
    });
    for (let i = 0; i < EVENTS_PER_RUN && written < total; i++) {
      for (const run of group) {
        if (written >= total) break;
        clock += 7;
        const at = new Date(clock);
        let type: string;
        let actor = run.agent;
        let data: Json;
        let stepId: string | null = null;
        if (i === 0) {
          type = "run.started";
          data = { title: `Refund a damaged order for customer ${runNo}`, via: "api" };
        } else if (i === EVENTS_PER_RUN - 1) {
          type = "run.completed";
          data = {};
        } else if (i % 17 === 0) {
          type = "escalation.claimed";
          actor = `user:reviewer-${runNo % 7}@example.com`;
          data = { escalationId: `esc_${run.runId}_${i}`, kind: "APPROVAL_REQUIRED" };
        } else if (i % 23 === 0) {
          type = "task.completed";
          actor = "system:worker";
          data = { taskId: `tsk_${run.runId}_${i}`, attempt: 1 };
        } else {
          stepId = `stp_${run.runId}_${run.step}`;
          type = i % 2 ? "step.intended" : "step.confirmed";
          data = i % 2 ? { stepIdx: run.step, tool: "charge_card", stepKey: "a".repeat(32), phase: "STAGING" } : { stepIdx: run.step++, externalRef: `ch_${run.runId}_${i}` };
        }
        const link = chainLink(run.last, { scope: `run:${run.runId}`, runId: run.runId, stepId, type, actor, data }, at);
        run.last = { seq: link.seq, hash: link.hash };
        out.push([link.scope, link.seq, link.runId, link.stepId, link.type, link.actor, JSON.stringify(link.data), at.toISOString(), link.prevHash, link.hash]);
        written++;
        if (out.length === batch) {
          yield out;
          out = [];
        }
      }
    }
  }
  if (out.length > 0) yield out;
}

async function fill(kind: DatabaseKind, url: string, total: number): Promise<number> {
  const t0 = performance.now();
  const now = new Date().toISOString();
  if (kind === "sqlite") {
    const db = new Database(fileOf(url));
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = OFF"); // loading only
    const sqliteAt = (iso: string) => iso.replace("Z", "+00:00"); // the adapter's format
    db.prepare(`INSERT INTO "User" ("id","email","name","role","createdAt","updatedAt") VALUES (?,?,?,?,?,?)`).run(VIEWER_ID, "bench-viewer@example.com", "Bench Viewer", "viewer", sqliteAt(now), sqliteAt(now));
    const insert = db.prepare(`INSERT INTO "AuditEvent" (${COLUMNS.map((c) => `"${c}"`).join(",")}) VALUES (${COLUMNS.map(() => "?").join(",")})`);
    db.transaction(() => {
      for (const rows of events(total, 10_000)) for (const r of rows) insert.run(...r.map((v, i) => (i === 7 ? sqliteAt(v as string) : v)));
    })();
    db.pragma("wal_checkpoint(TRUNCATE)");
    db.exec("ANALYZE");
    db.close();
  } else {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(`INSERT INTO "User" ("id","email","name","role","createdAt","updatedAt") VALUES ($1,$2,$3,$4,$5,$5)`, [VIEWER_ID, "bench-viewer@example.com", "Bench Viewer", "viewer", now]);
      await client.query("BEGIN");
      for (const rows of events(total, 1000)) {
        const values = rows.map((_, r) => `(${COLUMNS.map((_c, c) => `$${r * COLUMNS.length + c + 1}${c === 6 ? "::jsonb" : c === 7 ? "::timestamp(3)" : ""}`).join(",")})`);
        await client.query(`INSERT INTO "AuditEvent" (${COLUMNS.map((c) => `"${c}"`).join(",")}) VALUES ${values.join(",")}`, rows.flat());
      }
      await client.query("COMMIT");
      await client.query(`VACUUM ANALYZE "AuditEvent"`);
    } finally {
      await client.end();
    }
  }
  return (performance.now() - t0) / 1000;
}

// ---------------------------------------------------------------------------------------------
// Measurements, each in a child process.

type Task = "baseline" | "export-csv" | "export-jsonl" | "export-csv-rare-actor" | "pages" | "verify" | "heads";
const TASKS: readonly Task[] = ["baseline", "export-csv", "export-jsonl", "export-csv-rare-actor", "pages", "verify", "heads"];

interface Measured {
  task: Task;
  seconds: number;
  /** Peak resident memory of the whole process (VmHWM), in MB. */
  peakRssMb: number;
  /**
   * Peak anonymous resident memory (RssAnon: the JS heap, buffers, native allocations), in MB. The
   * rest of RSS is file pages: SQLite's memory-mapped reads (mmap_size 256 MiB, lib/core/db/prisma.ts)
   * count as resident while the export reads the file, without being the export's memory.
   */
  peakAnonMb: number;
  /** Peak V8 heap in use, in MB. */
  peakHeapMb: number;
  detail: Record<string, number | string>;
}

/** Samples RssAnon (Linux /proc) and the V8 heap every 20 ms; `stop` gives their peaks in MB. */
function sampleMemory(): { stop: () => { anonMb: number; heapMb: number } } {
  let anonKb = 0;
  let heap = 0;
  const sample = () => {
    const m = /RssAnon:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"));
    if (m) anonKb = Math.max(anonKb, Number(m[1]));
    heap = Math.max(heap, process.memoryUsage().heapUsed);
  };
  const timer = setInterval(sample, 20);
  return {
    stop: () => {
      clearInterval(timer);
      sample();
      return { anonMb: Math.round(anonKb / 1024), heapMb: Math.round(heap / 1024 / 1024) };
    },
  };
}

async function drain(stream: ReadableStream<Uint8Array>): Promise<{ bytes: number; lines: number }> {
  let bytes = 0;
  let lines = 0;
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    for (const b of value) if (b === 10) lines++;
  }
  return { bytes, lines };
}

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}

async function child(task: Task, url: string): Promise<void> {
  process.env.DATABASE_URL = url;
  const client = openPrisma(url);
  useProcessPrisma(client);
  await client;
  const detail: Record<string, number | string> = {};
  const memory = sampleMemory();
  const t0 = performance.now();
  await runWithSessionReader(async () => VIEWER_ID, async () => {
    const actor = await requireUser("read");
    switch (task) {
      case "baseline":
        await findAuditEvents({ actor, filters: { take: 1 } });
        break;
      case "export-csv":
      case "export-jsonl":
      case "export-csv-rare-actor": {
        const rare = task === "export-csv-rare-actor";
        const file = await exportAuditEvents({ actor, filters: { format: task === "export-jsonl" ? "jsonl" : "csv", ...(rare ? { actor: "user:reviewer-3@" } : {}) } });
        const { bytes, lines } = await drain(file.stream);
        detail.megabytes = Math.round(bytes / 1e5) / 10;
        detail.lines = lines;
        break;
      }
      case "pages": {
        const first = await findAuditEvents({ actor, filters: { take: 1 } });
        const sampleRun = first.events[0]?.runId ?? "";
        const at = first.events[0]?.at ?? new Date().toISOString();
        const dayBefore = new Date(Date.parse(at) - 3 * 3600_000).toISOString().slice(0, 16);
        const cases: [string, () => Promise<unknown>][] = [
          ["newest 50", () => findAuditEvents({ actor })],
          ["a run's 50", () => findAuditEvents({ actor, filters: { run: sampleRun } })],
          ["type step. (common)", () => findAuditEvents({ actor, filters: { type: "step." } })],
          ["actor user:reviewer-3@ (rare)", () => findAuditEvents({ actor, filters: { actor: "user:reviewer-3@" } })],
          ["actor nobody (no match: one window)", () => findAuditEvents({ actor, filters: { actor: "user:nobody@" } })],
          ["from/to 3 hours before the newest", () => findAuditEvents({ actor, filters: { from: dayBefore, to: dayBefore } })],
        ];
        for (const [name, call] of cases) {
          await call(); // warm
          const ms: number[] = [];
          for (let i = 0; i < 5; i++) ms.push((await timed(call)).ms);
          ms.sort((a, b) => a - b);
          detail[`${name} (median ms)`] = Math.round(ms[2]! * 10) / 10;
        }
        break;
      }
      case "verify": {
        const result = await verifyAuditChains({ actor });
        detail.verified = String(result.verified);
        detail.chains = result.chains;
        detail.events = result.events;
        break;
      }
      case "heads": {
        const exported = await timed(() => exportChainHeads({ actor }));
        detail["export heads (s)"] = Math.round(exported.ms) / 1000;
        detail.chains = exported.value.chains;
        detail["file MB"] = Math.round(JSON.stringify(exported.value).length / 1e5) / 10;
        const checked = await timed(() => checkChainHeads({ actor, file: exported.value }));
        detail["check heads (s)"] = Math.round(checked.ms) / 1000;
        detail.matches = String(checked.value.matches);
        break;
      }
    }
  });
  const seconds = (performance.now() - t0) / 1000;
  const { anonMb, heapMb } = memory.stop();
  const peakRssMb = Math.round(process.resourceUsage().maxRSS / 1024);
  process.stdout.write(`RESULT ${JSON.stringify({ task, seconds, peakRssMb, peakAnonMb: anonMb, peakHeapMb: heapMb, detail } satisfies Measured)}\n`);
  await (await client).$disconnect();
}

function runChild(task: Task, url: string): Promise<Measured> {
  return new Promise((resolve, reject) => {
    // The lib functions reach a React component with a CSS module (lib/server/auth): register-css loads it as {}.
    const cssHooks = fileURLToPath(new URL("./lib/register-css.mjs", import.meta.url));
    const args = ["--import", "tsx", "--import", cssHooks, fileURLToPath(import.meta.url), "--child", task, "--url", url];
    const p = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    p.stdout.on("data", (d: Buffer) => (out += d.toString()));
    p.on("error", reject);
    p.on("exit", (code) => {
      const line = out.split("\n").find((l) => l.startsWith("RESULT "));
      if (code !== 0 || !line) reject(new Error(`${task} exited ${code}: ${out.slice(-2000)}`));
      else resolve(JSON.parse(line.slice("RESULT ".length)) as Measured);
    });
  });
}

async function main(): Promise<void> {
  const childTask = argValue("child");
  if (childTask) return child(childTask as Task, argValue("url")!);

  const total = flag("events", 1_000_000);
  const storeArg = argValue("store");
  const stores: DatabaseKind[] = storeArg === "sqlite" || storeArg === "postgresql" ? [storeArg] : ["sqlite", "postgresql"];
  const reuse = argValue("reuse");
  const results: Record<string, unknown> = {};
  for (const kind of stores) {
    const db = reuse ? null : await throwaway(kind, "audit");
    const url = reuse ?? db!.url;
    try {
      if (db) console.log(`[${kind}] filled ${total} events in ${fmt(await fill(kind, url, total), 1)} s (${url})`);
      const measured: Measured[] = [];
      for (const task of TASKS) {
        const m = await runChild(task, url);
        console.log(`[${kind}] ${task}: ${fmt(m.seconds, 2)} s, peak RSS ${m.peakRssMb} MB (anonymous ${m.peakAnonMb} MB, V8 heap ${m.peakHeapMb} MB) ${JSON.stringify(m.detail)}`);
        measured.push(m);
      }
      printTable(`audit log at ${total} events, ${kind}`, [
        ["measurement", "seconds", "peak RSS (MB)", "anonymous (MB)", "V8 heap (MB)", "detail"],
        ...measured.map((m) => [m.task, fmt(m.seconds, 2), String(m.peakRssMb), String(m.peakAnonMb), String(m.peakHeapMb), Object.entries(m.detail).map(([k, v]) => `${k}: ${v}`).join("; ")]),
      ]);
      results[kind] = { events: total, measured };
    } finally {
      if (db && !hasFlag("keep")) await db.drop();
      else if (db) console.log(`[${kind}] kept: --reuse ${url} --store ${kind}`);
    }
  }
  console.log(`\nwrote ${writeResults("audit", results)}`);
}

await main();
