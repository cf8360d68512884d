/**
 * Fills a migrated throwaway database with a realistic saga history, fast: rows are built in memory
 * and written with raw multi-row INSERTs inside big transactions (not through the engine), with the
 * secondary indexes dropped during the load and rebuilt from their own definitions afterwards (one
 * sort per index instead of a random B-tree insert per row). The mix:
 * run statuses, tool classes, staged and committed steps, pivots (pending / approved / rejected),
 * escalations of every kind (open, claimed, resolved), correction drafts and a hash-chained-looking
 * audit trail (the hashes are random: nothing here verifies chains).
 */
import { randomBytes } from "node:crypto";
import Database from "better-sqlite3";
import pg from "pg";
import type { DatabaseKind } from "@/lib/core/db/url";
import { fileOf } from "./common";

/** Deterministic PRNG (mulberry32), so two stores get the same data. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TOOLS = [
  { name: "create_email_draft", cls: "REVERSIBLE", comp: "delete_email_draft", audience: ["agent"] },
  { name: "create_ticket_draft", cls: "REVERSIBLE", comp: "delete_ticket_draft", audience: ["agent"] },
  { name: "create_ticket", cls: "COMPENSATABLE", comp: "close_ticket", audience: ["support"] },
  { name: "authorize_payment", cls: "COMPENSATABLE", comp: "cancel_authorization", audience: ["finance"] },
  { name: "capture_payment", cls: "COMPENSATABLE", comp: "refund_charge", audience: ["finance", "customer"] },
  { name: "reship_order", cls: "COMPENSATABLE", comp: "cancel_shipment", audience: ["partner"] },
  { name: "update_crm_record", cls: "COMPENSATABLE", comp: "restore_crm_snapshot", audience: ["support"] },
  { name: "send_email", cls: "IRREVERSIBLE", comp: null, audience: ["customer"] },
] as const;

const RUN_STATUS_MIX: [string, number][] = [
  ["COMPLETED", 0.7], ["RUNNING", 0.06], ["AWAITING_PIVOT", 0.04], ["COMMITTING", 0.02], ["UNWOUND", 0.1], ["UNWINDING", 0.02], ["NEEDS_ATTENTION", 0.06],
];
const ESC_KINDS = ["APPROVAL_REQUIRED", "COMPENSATION_FAILED", "OUTCOME_UNKNOWN", "STUCK_AFTER_PIVOT", "REVOKE_OUT_OF_WINDOW"];

export const BENCH_REVIEWER_ID = "usr_bench_reviewer";

type Row = (string | number | null)[];
interface Table {
  name: string;
  columns: string[];
  rows: Row[];
}

export interface Generated {
  runs: number;
  steps: number;
  pivots: number;
  escalations: number;
  corrections: number;
  auditEvents: number;
  seconds: number;
  /** Ids to read back: runs with many steps, pending pivots. */
  sampleRunIds: string[];
  pendingPivotIds: string[];
}

const hex = (n: number) => randomBytes(n).toString("hex");

/** Generates `runs` runs with `steps` steps in total (about) into the database at `url`. */
export async function generate(kind: DatabaseKind, url: string, runs: number, steps: number, seed = 6): Promise<Generated> {
  const t0 = Date.now();
  const rand = rng(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  const ts = (ms: number) => (kind === "sqlite" ? new Date(ms).toISOString().replace("Z", "+00:00") : new Date(ms).toISOString());
  const writer = kind === "sqlite" ? sqliteWriter(url) : await pgWriter(url);
  const counts = { runs: 0, steps: 0, pivots: 0, escalations: 0, corrections: 0, auditEvents: 0 };
  const sampleRunIds: string[] = [];
  const pendingPivotIds: string[] = [];
  const now = Date.now();
  const span = 90 * 24 * 3600 * 1000;
  const avgSteps = steps / runs;
  try {
    await writer.exec(
      `INSERT INTO "User" ("id","email","name","role","createdAt","updatedAt") VALUES ('${BENCH_REVIEWER_ID}','bench-reviewer@example.com','Bench Reviewer','reviewer','${ts(now)}','${ts(now)}')`,
    );
    const BATCH = 2000;
    for (let start = 0; start < runs; start += BATCH) {
      const T = {
        run: { name: "Run", columns: ["id", "title", "agent", "onBehalfOf", "metadata", "status", "createdAt", "updatedAt"], rows: [] as Row[] },
        step: {
          name: "Step",
          columns: ["id", "runId", "stepIdx", "tool", "toolClass", "stepKey", "args", "argsHash", "status", "phase", "policyVersion", "externalRef", "result", "compensation", "compensationKey", "compensationState", "compensationRef", "correction", "audience", "attempts", "createdAt", "updatedAt", "compensationRequestedAt", "compensationConfirmedAt"],
          rows: [] as Row[],
        },
        pivot: { name: "Pivot", columns: ["id", "runId", "status", "summary", "plan", "planHash", "stagedStepIds", "deadline", "decidedBy", "decidedAt", "reason", "createdAt"], rows: [] as Row[] },
        esc: { name: "Escalation", columns: ["id", "runId", "stepId", "kind", "status", "title", "detail", "owner", "dedupeKey", "claimedBy", "claimedAt", "resolution", "resolvedBy", "resolvedAt", "createdAt"], rows: [] as Row[] },
        corr: { name: "Correction", columns: ["id", "runId", "stepId", "audience", "rank", "status", "subject", "body", "createdAt", "sentAt"], rows: [] as Row[] },
        audit: { name: "AuditEvent", columns: ["scope", "seq", "runId", "stepId", "type", "actor", "data", "at", "prevHash", "hash"], rows: [] as Row[] },
      };
      for (let r = start; r < Math.min(runs, start + BATCH); r++) {
        const runId = `run_${r.toString(36).padStart(8, "0")}${hex(4)}`;
        const created = now - span + Math.floor((r / runs) * span) + Math.floor(rand() * 1000);
        let x = rand();
        let status = "COMPLETED";
        for (const [s, p] of RUN_STATUS_MIX) {
          if (x < p) {
            status = s;
            break;
          }
          x -= p;
        }
        const agent = `support-agent-${Math.floor(rand() * 20)}`;
        const n = Math.max(1, Math.round(avgSteps * (0.3 + 1.4 * rand())));
        const customer = `cust-${Math.floor(rand() * runs)}@example.com`;
        let seq = 0;
        let clock = created;
        const audit = (stepId: string | null, type: string, data: object) => {
          seq++;
          clock += 5 + Math.floor(rand() * 50);
          T.audit.rows.push([`run:${runId}`, seq, runId, stepId, type, `agent:${agent}`, JSON.stringify(data), ts(clock), hex(32), hex(32)]);
        };
        audit(null, "run.started", { title: "Refund a damaged order" });
        const pivotAt = Math.floor(n * 0.6);
        const hasPivot = status !== "RUNNING" && n >= 3;
        const staged: string[] = [];
        const unwound = status === "UNWOUND" || status === "UNWINDING";
        for (let i = 0; i < n; i++) {
          const committing = hasPivot && i >= pivotAt;
          const tool = committing ? pick(TOOLS.filter((t) => t.cls !== "REVERSIBLE")) : pick(TOOLS.filter((t) => t.cls !== "IRREVERSIBLE"));
          const stepId = `stp_${r.toString(36)}_${i}${hex(3)}`;
          let st = "CONFIRMED";
          let compState = "NONE";
          if (status === "NEEDS_ATTENTION" && i === n - 1) st = pick(["UNKNOWN", "FAILED", "COMPENSATION_FAILED"]);
          else if (status === "RUNNING" && i === n - 1 && rand() < 0.3) st = "INTENDED";
          else if (unwound && tool.cls !== "IRREVERSIBLE") {
            st = status === "UNWOUND" ? "COMPENSATED" : "CONFIRMED";
            compState = status === "UNWOUND" ? "CONFIRMED" : "REQUESTED";
          } else if (rand() < 0.02) st = "FAILED";
          const ref = st === "CONFIRMED" || st === "COMPENSATED" ? `ext_${hex(6)}` : null;
          const key = hex(16);
          clock += 20 + Math.floor(rand() * 400);
          T.step.rows.push([
            stepId, runId, i, tool.name, tool.cls, key, JSON.stringify({ orderId: `ord_${r}`, amount: Math.floor(rand() * 10000) }), hex(32), st,
            committing ? "COMMIT" : "STAGING", 1, ref, ref ? JSON.stringify({ id: ref }) : null,
            tool.comp ? JSON.stringify({ tool: tool.comp, args: { stepKey: key } }) : null, tool.comp ? hex(16) : null, compState,
            compState === "CONFIRMED" ? `cmp_${hex(6)}` : null,
            tool.cls === "IRREVERSIBLE" ? JSON.stringify({ audience: ["customer"], subject: "Correction", body: "We wrote to you in error." }) : null,
            JSON.stringify(tool.audience), 1, ts(clock), ts(clock + 30),
            compState === "NONE" ? null : ts(clock + 60_000), compState === "CONFIRMED" ? ts(clock + 61_000) : null,
          ]);
          if (!committing) staged.push(stepId);
          audit(stepId, "step.intended", { stepIdx: i, tool: tool.name, stepKey: key, phase: committing ? "COMMIT" : "STAGING" });
          audit(stepId, `step.${st === "INTENDED" ? "intended" : st.toLowerCase()}`, { stepIdx: i, externalRef: ref });
          if (unwound && compState !== "NONE") audit(stepId, "compensation.confirmed", { stepIdx: i });
          // A retry that found its effect by key (the overview's "duplicates prevented").
          if (rand() < 0.01) audit(stepId, "step.reconciled", { outcome: "CONFIRMED", lookups: 1 });
          if (tool.cls === "IRREVERSIBLE" && (unwound || status === "NEEDS_ATTENTION")) {
            const corrStatus = pick(["DRAFT", "SENT", "DISMISSED"]);
            T.corr.rows.push([`cor_${hex(8)}`, runId, stepId, '["customer"]', 2, corrStatus, "Correction", "We wrote to you in error.", ts(clock + 100), corrStatus === "SENT" ? ts(clock + 3_600_000) : null]);
            counts.corrections++;
          }
          if ((status === "NEEDS_ATTENTION" && i === n - 1) || rand() < 0.004) {
            const open = status === "NEEDS_ATTENTION";
            const escStatus = open ? (rand() < 0.7 ? "OPEN" : "CLAIMED") : "RESOLVED";
            const escKind = pick(ESC_KINDS);
            T.esc.rows.push([
              `esc_${hex(8)}`, runId, stepId, escKind, escStatus, `${tool.name} (step ${i}) needs a person`, JSON.stringify({ tool: tool.name, stepKey: key }),
              "payments-team", `${escKind}:${stepId}`, escStatus === "OPEN" ? null : "bench-reviewer@example.com", escStatus === "OPEN" ? null : ts(clock + 500),
              escStatus === "RESOLVED" ? JSON.stringify({ note: "done" }) : null, escStatus === "RESOLVED" ? "bench-reviewer@example.com" : null, escStatus === "RESOLVED" ? ts(clock + 900) : null, ts(clock + 200),
            ]);
            counts.escalations++;
            audit(stepId, "escalation.raised", { kind: escKind });
          }
          if (hasPivot && i === pivotAt - 1) {
            const pivotId = `piv_${hex(8)}`;
            const pStatus = status === "AWAITING_PIVOT" ? "PENDING" : status === "UNWOUND" && rand() < 0.5 ? "REJECTED" : "APPROVED";
            const plan = TOOLS.filter((t) => t.cls !== "REVERSIBLE").slice(0, 3).map((t) => ({ tool: t.name, args: { orderId: `ord_${r}` }, argsHash: hex(32), policyVersion: 1, toolClass: t.cls }));
            T.pivot.rows.push([
              pivotId, runId, pStatus, "Refund and reship the order", JSON.stringify(plan), hex(32), JSON.stringify(staged), ts(clock + 86_400_000),
              pStatus === "PENDING" ? null : "bench-reviewer@example.com", pStatus === "PENDING" ? null : ts(clock + 60_000), pStatus === "REJECTED" ? "no" : null, ts(clock + 10),
            ]);
            counts.pivots++;
            if (pStatus === "PENDING" && pendingPivotIds.length < 500) pendingPivotIds.push(pivotId);
            audit(null, "pivot.requested", { pivotId });
            if (pStatus !== "PENDING") audit(null, `pivot.${pStatus.toLowerCase()}`, { pivotId });
            if (status === "AWAITING_PIVOT") break;
          }
        }
        if (status === "COMPLETED") audit(null, "run.completed", {});
        if (unwound) audit(null, "run.unwound", {});
        T.run.rows.push([runId, `Support case ${r}`, agent, customer, JSON.stringify({ ticket: r }), status, ts(created), ts(clock)]);
        if (sampleRunIds.length < 500 && rand() < 0.05) sampleRunIds.push(runId);
        counts.runs++;
      }
      counts.steps += T.step.rows.length;
      counts.auditEvents += T.audit.rows.length;
      await writer.batch([T.run, T.step, T.pivot, T.esc, T.corr, T.audit]);
    }
    await writer.finish();
  } finally {
    await writer.close();
  }
  return { ...counts, seconds: (Date.now() - t0) / 1000, sampleRunIds, pendingPivotIds };
}

/**
 * What a database generated earlier holds (for `bench:dashboard --reuse`): the counts, and sample ids
 * picked the way `generate` picks them (about one run in twenty, up to 500; pending pivots, up to 500).
 * `seconds` is NaN: the generation time was printed when it was generated.
 */
export async function countGenerated(kind: DatabaseKind, url: string): Promise<Generated> {
  const sql = {
    counts: `SELECT (SELECT COUNT(*) FROM "Run") AS runs, (SELECT COUNT(*) FROM "Step") AS steps, (SELECT COUNT(*) FROM "Pivot") AS pivots,
      (SELECT COUNT(*) FROM "Escalation") AS escalations, (SELECT COUNT(*) FROM "Correction") AS corrections, (SELECT COUNT(*) FROM "AuditEvent") AS "auditEvents"`,
    // Run ids start with the run's number in base 36, so every 20th id is spread over the whole history.
    runs: `SELECT id FROM (SELECT id, ROW_NUMBER() OVER (ORDER BY id) AS n FROM "Run") AS r WHERE n % 20 = 7 ORDER BY n LIMIT 500`,
    pivots: `SELECT id FROM "Pivot" WHERE status = 'PENDING' ORDER BY id LIMIT 500`,
  };
  let rows: { counts: Record<string, number | string>; runs: { id: string }[]; pivots: { id: string }[] };
  if (kind === "sqlite") {
    const db = new Database(fileOf(url), { readonly: true });
    try {
      rows = { counts: db.prepare(sql.counts).get() as Record<string, number>, runs: db.prepare(sql.runs).all() as { id: string }[], pivots: db.prepare(sql.pivots).all() as { id: string }[] };
    } finally {
      db.close();
    }
  } else {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const counts = (await client.query<Record<string, string>>(sql.counts)).rows[0]!;
      rows = { counts, runs: (await client.query<{ id: string }>(sql.runs)).rows, pivots: (await client.query<{ id: string }>(sql.pivots)).rows };
    } finally {
      await client.end();
    }
  }
  const n = (k: string) => Number(rows.counts[k]);
  return {
    runs: n("runs"), steps: n("steps"), pivots: n("pivots"), escalations: n("escalations"), corrections: n("corrections"), auditEvents: n("auditEvents"),
    seconds: NaN, sampleRunIds: rows.runs.map((r) => r.id), pendingPivotIds: rows.pivots.map((r) => r.id),
  };
}

interface Writer {
  exec(sql: string): Promise<void>;
  /** Writes the tables in one transaction. */
  batch(tables: Table[]): Promise<void>;
  finish(): Promise<void>;
  close(): Promise<void>;
}

const q = (c: string) => `"${c}"`;

/** The tables the generator fills (their secondary indexes are rebuilt after the load). */
const LOADED_TABLES = ["Run", "Step", "Pivot", "Escalation", "Correction", "AuditEvent"];

function sqliteWriter(url: string): Writer {
  const db = new Database(fileOf(url));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = OFF"); // loading only; the app reopens with FULL
  // Every index but the primary keys' (no `sql`); rebuilding a unique one in finish() checks the data too.
  const secondary = db
    .prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN (${LOADED_TABLES.map(() => "?").join(",")})`)
    .all(...LOADED_TABLES) as { name: string; sql: string }[];
  for (const index of secondary) db.exec(`DROP INDEX ${q(index.name)}`);
  const PER = 100;
  const stmts = new Map<string, Database.Statement>();
  const stmt = (t: Table, rows: number) => {
    const k = `${t.name}:${rows}`;
    let s = stmts.get(k);
    if (!s) {
      const one = `(${t.columns.map(() => "?").join(",")})`;
      s = db.prepare(`INSERT INTO ${q(t.name)} (${t.columns.map(q).join(",")}) VALUES ${Array(rows).fill(one).join(",")}`);
      stmts.set(k, s);
    }
    return s;
  };
  return {
    exec: async (sql) => void db.exec(sql),
    batch: async (tables) => {
      db.transaction(() => {
        for (const t of tables) {
          for (let i = 0; i < t.rows.length; i += PER) {
            const chunk = t.rows.slice(i, i + PER);
            stmt(t, chunk.length).run(...chunk.flat());
          }
        }
      })();
    },
    finish: async () => {
      for (const index of secondary) db.exec(index.sql);
      db.exec("ANALYZE");
      db.pragma("wal_checkpoint(TRUNCATE)");
    },
    close: async () => void db.close(),
  };
}

async function pgWriter(url: string): Promise<Writer> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query("SET synchronous_commit = off"); // loading only
  await client.query("SET maintenance_work_mem = '256MB'"); // the index rebuilds in finish()
  // As on SQLite: every index but those of constraints (the primary keys), rebuilt in finish().
  const { rows: secondary } = await client.query<{ name: string; sql: string }>(
    `SELECT indexname AS name, indexdef AS sql FROM pg_indexes
      WHERE schemaname = 'public' AND tablename = ANY($1) AND indexname NOT IN (SELECT conname FROM pg_constraint)`,
    [LOADED_TABLES],
  );
  for (const index of secondary) await client.query(`DROP INDEX ${q(index.name)}`);
  const PER = 1000;
  return {
    exec: async (sql) => void (await client.query(sql)),
    batch: async (tables) => {
      await client.query("BEGIN");
      try {
        for (const t of tables) {
          for (let i = 0; i < t.rows.length; i += PER) {
            const chunk = t.rows.slice(i, i + PER);
            const w = t.columns.length;
            const values = chunk.map((_, r) => `(${t.columns.map((__, c) => `$${r * w + c + 1}`).join(",")})`).join(",");
            await client.query(`INSERT INTO ${q(t.name)} (${t.columns.map(q).join(",")}) VALUES ${values}`, chunk.flat());
          }
        }
        await client.query("COMMIT");
      } catch (e) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw e;
      }
    },
    finish: async () => {
      for (const index of secondary) await client.query(index.sql);
      await client.query("VACUUM ANALYZE");
    },
    close: () => client.end(),
  };
}
