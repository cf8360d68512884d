/**
 * Shared by the benches (bench/run.ts, bench/dashboard.ts): statistics, the table printer, the
 * no-op tool, throwaway databases, raw connections and the results file. Bench-only code: nothing
 * in lib/ or the test suites imports it.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { z } from "zod";
import type { PrismaClient } from "@/generated/prisma";
import { openPrisma } from "@/lib/core/db/prisma";
import type { DatabaseObserver } from "@/lib/core/db/raw-driver";
import { defineCompensator, defineTool, ToolRegistry } from "@/packages/client/src/saga/tools";
import type { DatabaseKind } from "@/lib/core/db/url";
import { reserveTestDatabase, type ThrowawayDatabase } from "@/tests/support/test-database";

export { performance };

// ---------------------------------------------------------------------------------------------
// Statistics.

/** Median with min and max over repeated measurements of one figure. */
export interface Spread {
  median: number;
  min: number;
  max: number;
  n: number;
}

export function spread(values: readonly number[]): Spread {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  const median = s.length === 0 ? NaN : s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return { median, min: s[0] ?? NaN, max: s.at(-1) ?? NaN, n: s.length };
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export interface Percentiles {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  /** Where a rare stall (a WAL checkpoint, a GC pause) shows when p99 does not. */
  p999: number;
  max: number;
}

export function percentiles(values: readonly number[]): Percentiles {
  const s = [...values].sort((a, b) => a - b);
  return { n: s.length, p50: percentile(s, 50), p95: percentile(s, 95), p99: percentile(s, 99), p999: percentile(s, 99.9), max: s.at(-1) ?? NaN };
}

export function fmt(x: number, digits = 3): string {
  if (!Number.isFinite(x)) return "-";
  return x >= 1000 ? x.toFixed(0) : x >= 100 ? x.toFixed(1) : x.toFixed(digits);
}

export function fmtSpread(s: Spread, digits = 3): string {
  return `${fmt(s.median, digits)} (${fmt(s.min, digits)}–${fmt(s.max, digits)})`;
}

/** Prints rows as an aligned text table (the first row is the header). */
export function printTable(title: string, rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  const line = (r: readonly string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  const out = [`\n## ${title}`, line(rows[0]!), widths.map((w) => "-".repeat(w)).join("  "), ...rows.slice(1).map(line)].join("\n");
  console.log(out);
  return out;
}

/** Runs `subjects` alternately for `rounds` rounds (the order rotates each round), collecting each result. */
export async function interleave<T>(rounds: number, subjects: Record<string, () => Promise<T>>): Promise<Record<string, T[]>> {
  const names = Object.keys(subjects);
  const out: Record<string, T[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(k + r) % names.length]!;
      out[name]!.push(await subjects[name]!());
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The no-op tool: COMPENSATABLE, so every call is a logged step with a pre-written compensation.

export const noopTool = defineTool({
  name: "bench_noop",
  class: "COMPENSATABLE",
  args: z.object({ i: z.number() }),
  call: async () => ({ externalRef: null, result: null }),
  lookup: async () => null,
  compensation: { with: "bench_undo", build: () => ({}) },
  audience: () => ["agent"],
});
export const noopUndo = defineCompensator({ name: "bench_undo", args: z.object({}), run: async () => ({}), verify: async () => ({ done: true }) });
/**
 * Two tools of one shape for the cost of sealing: a letter to a person (their email names the subject,
 * their name is the second personal field). `bench_letter` declares both personal in the tool table,
 * `bench_letter_plain` declares nothing (stored in clear); each has a reviewed row (declareBenchLetters).
 */
const letterTool = (name: string) =>
  defineTool({
    name,
    class: "COMPENSATABLE",
    args: z.object({ i: z.number(), email: z.string(), name: z.string() }),
    call: async () => ({ externalRef: null, result: null }),
    lookup: async () => null,
    compensation: { with: "bench_undo", build: () => ({}) },
    audience: () => ["agent"],
  });
export const SEALED_LETTER = "bench_letter";
export const PLAIN_LETTER = "bench_letter_plain";
export const benchRegistry = (): ToolRegistry => new ToolRegistry([noopTool, letterTool(SEALED_LETTER), letterTool(PLAIN_LETTER)], [noopUndo]);

/** A letter's arguments: ten people in turn, so a run of steps finds each person's key after the first. */
export const letterArgs = (i: number) => ({ i, email: `person${i % 10}@example.com`, name: `Person Number${i % 10}` });

/** The tool-table rows of the two letter tools (only bench_letter declares personal fields). */
export async function declareBenchLetters(prisma: import("@/generated/prisma").PrismaClient): Promise<void> {
  for (const name of [SEALED_LETTER, PLAIN_LETTER]) {
    await prisma.toolPolicy.create({
      data: {
        name, toolClass: "COMPENSATABLE", compensator: "bench_undo", lookupAvailable: true, status: "REVIEWED", revocationWindowSec: 3600,
        ...(name === SEALED_LETTER ? { personalData: { subject: "email", args: ["name"], result: [] } } : {}),
      },
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Databases.

export async function throwaway(kind: DatabaseKind, label: string): Promise<ThrowawayDatabase> {
  const db = reserveTestDatabase(`bench-${label}`, kind);
  await db.create();
  return db;
}

/** The path of a `file:` url. */
export function fileOf(url: string): string {
  return url.replace(/^file:/, "");
}

/** A statement Prisma ran (its query log). */
export interface LoggedQuery {
  query: string;
  params: string;
  duration: number;
}

/**
 * What a client sent, counted by the observer the bench passes to openPrisma: Prisma's statements
 * (logged in full), the saga log's own statements (lib/core/db/step-log-sql.ts: counted), and commits
 * (Prisma's COMMITs and the saga log's write transactions; each autocommit write is one).
 */
export interface SentCounts {
  prisma: LoggedQuery[];
  driverStatements: number;
  commits: number;
}

/** A client as lib/core/db/prisma.ts `openPrisma` opens it, with an observer counting into the returned `sent`. */
export async function openCountingPrisma(url: string): Promise<{ prisma: PrismaClient; sent: SentCounts }> {
  const sent: SentCounts = { prisma: [], driverStatements: 0, commits: 0 };
  const observer: DatabaseObserver = {
    statement: (s) => {
      if (s.via === "prisma") sent.prisma.push({ query: s.sql, params: s.params ?? "[]", duration: s.durationMs ?? 0 });
      else sent.driverStatements++;
    },
    commit: () => sent.commits++,
  };
  return { prisma: await openPrisma(url, { observer }), sent };
}

/** A client as lib/core/db/prisma.ts `openPrisma` opens it, with every Prisma statement passed to `onQuery`. */
export function openLoggingPrisma(url: string, onQuery: (q: LoggedQuery) => void): Promise<PrismaClient> {
  // Every timed statement: Prisma's, and the screens' own reads on the driver (lib/core/db/raw-read.ts).
  return openPrisma(url, { observer: { statement: (s) => s.durationMs !== undefined && onQuery({ query: s.sql, params: s.params ?? "[]", duration: s.durationMs }) } });
}

// ---------------------------------------------------------------------------------------------
// Results.

export function writeResults(name: string, data: unknown): string {
  const dir = path.join(process.cwd(), "bench", "results");
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${new Date().toISOString().replace(/[:.]/g, "-")}-${name}.json`);
  writeFileSync(file, JSON.stringify(data, null, 2));
  return file;
}

/** `--name value` from argv, else `fallback`. */
export function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const v = Number(process.argv[i + 1]);
  if (!Number.isFinite(v) || v < 0) throw new Error(`--${name} needs a number`);
  return v;
}

export function hasFlag(name: string): boolean {
  return process.argv.includes(`--${name}`);
}
