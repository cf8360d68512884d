/**
 * The fault matrix's oracle: the simulated systems' ledgers checked against the saga log, reduced to
 * the five figures every fault suite prints, so every fault is judged by the same measure: duplicate effects, lost intents, unapproved
 * irreversible calls, UNKNOWN rows at rest, failed compensations escalated. Plus a seeded PRNG, so a
 * failing trial can be replayed from its seed.
 *
 * No vitest imports: process children and benches can use it too.
 */
import type { LedgerEntry } from "@/lib/demo/sim/ledger";
import type { EscalationRecord, StepRecord } from "@/packages/client/src/saga/store";
import { EscalationKind, Phase, StepStatus, ToolClass, UNSETTLED_STATUSES } from "@/packages/client/src/saga/vocabulary";

/** mulberry32: a tiny seeded PRNG (no dependency); same seed, same sequence. */
export class Prng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0 || 0x9e3779b9;
  }

  /** A float in [0, 1). */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** One element. */
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
}

/** Ledger ops that carry out a forward step (the effect a saga row stands for), keyed by its step key. */
export const FORWARD_OPS: ReadonlySet<string> = new Set([
  "ticketing.create",
  "ticketing.createDraft",
  "email.createDraft",
  "email.send",
  "payments.charge",
  "payments.authorize",
  "payments.capture",
  "warehouse.reship",
  "crm.update",
]);

/** The ledger op of an irreversible effect. */
export const IRREVERSIBLE_OPS: ReadonlySet<string> = new Set(["email.send", "email.sendDraft"]);

/** The five figures (goal 0, 0, 0, 0, 100%) and what they were computed over. */
export interface FaultFigures {
  /** (op, key) pairs with more than one effect in the ledger. */
  duplicateEffects: number;
  /**
   * Forward effects the log does not account for: no row with that key, or a row that says nothing
   * happened (NOT_EXECUTED, FAILED), or a row still INTENDED/UNKNOWN at rest although the effect exists.
   */
  lostIntents: number;
  /** Irreversible effects without an approval (no row, STAGING phase, or no approval id). */
  unapprovedIrreversible: number;
  /** Rows INTENDED or UNKNOWN when everything is at rest. */
  unknownAtRest: number;
  /** COMPENSATION_FAILED rows. */
  failedCompensations: number;
  /** ... of which carry a COMPENSATION_FAILED escalation. */
  escalatedCompensations: number;
  /** Rows looked at. */
  rows: number;
  /** Forward effects in the ledger. */
  effects: number;
  /** Details of every violation, for the failure message. */
  violations: string[];
}

/** The oracle over one ledger and the saga log of the runs that used it. */
export function computeFigures(ledger: readonly LedgerEntry[], steps: readonly StepRecord[], escalations: readonly EscalationRecord[]): FaultFigures {
  const violations: string[] = [];
  const byKey = new Map(steps.map((s) => [s.stepKey, s]));

  const perOpKey = new Map<string, number>();
  for (const e of ledger) {
    if (e.outcome !== "effect" || e.key === undefined) continue;
    // A receipt follows its charge and its refund under the charge's key: one of each kind per key.
    const kind = e.op === "payments.receipt" ? `:${String((e.args as { kind?: unknown } | null)?.kind)}` : "";
    const k = `${e.op}${kind} ${e.key}`;
    perOpKey.set(k, (perOpKey.get(k) ?? 0) + 1);
  }
  const dups = [...perOpKey].filter(([, n]) => n > 1);
  for (const [k, n] of dups) violations.push(`duplicate: ${k} has ${n} effects`);

  let lost = 0;
  let unapproved = 0;
  let effects = 0;
  for (const e of ledger) {
    if (e.outcome !== "effect") continue;
    if (FORWARD_OPS.has(e.op)) {
      effects++;
      const row = e.key === undefined ? undefined : byKey.get(e.key);
      const settled = row && (row.status === StepStatus.CONFIRMED || row.status === StepStatus.COMPENSATED || row.status === StepStatus.COMPENSATION_FAILED);
      if (!settled) {
        lost++;
        violations.push(`lost intent: ${e.op} ${e.ref ?? ""} key ${e.key ?? "(none)"} is ${row ? `a ${row.status} row` : "in no row"}`);
      }
    }
    if (IRREVERSIBLE_OPS.has(e.op)) {
      const row = e.key === undefined ? undefined : byKey.get(e.key);
      if (!row || row.phase === Phase.STAGING || !row.approvalId) {
        unapproved++;
        violations.push(`unapproved irreversible: ${e.op} ${e.ref ?? ""} (${row ? `phase ${row.phase}, approval ${row.approvalId}` : "no row"})`);
      }
    }
  }
  // The log's own view: an irreversible row executed before the pivot without approval.
  for (const s of steps) {
    if (s.toolClass === ToolClass.IRREVERSIBLE && s.phase === Phase.STAGING && s.status !== StepStatus.NOT_EXECUTED && s.status !== StepStatus.FAILED) {
      unapproved++;
      violations.push(`unapproved irreversible row: ${s.tool} step ${s.stepIdx} of ${s.runId}`);
    }
  }

  const unknown = steps.filter((s) => UNSETTLED_STATUSES.includes(s.status));
  for (const s of unknown) violations.push(`at rest: ${s.tool} step ${s.stepIdx} of ${s.runId} is ${s.status}`);

  const failed = steps.filter((s) => s.status === StepStatus.COMPENSATION_FAILED);
  const escalatedIds = new Set(escalations.filter((e) => e.kind === EscalationKind.COMPENSATION_FAILED && e.stepId).map((e) => e.stepId));
  const escalated = failed.filter((s) => escalatedIds.has(s.id));
  for (const s of failed) if (!escalatedIds.has(s.id)) violations.push(`silent: compensation of ${s.tool} step ${s.stepIdx} of ${s.runId} failed without escalation`);

  return {
    duplicateEffects: dups.length,
    lostIntents: lost,
    unapprovedIrreversible: unapproved,
    unknownAtRest: unknown.length,
    failedCompensations: failed.length,
    escalatedCompensations: escalated.length,
    rows: steps.length,
    effects,
    violations,
  };
}

/** Adds figures up (suites that compute them per cell). */
export function addFigures(a: FaultFigures, b: FaultFigures): FaultFigures {
  return {
    duplicateEffects: a.duplicateEffects + b.duplicateEffects,
    lostIntents: a.lostIntents + b.lostIntents,
    unapprovedIrreversible: a.unapprovedIrreversible + b.unapprovedIrreversible,
    unknownAtRest: a.unknownAtRest + b.unknownAtRest,
    failedCompensations: a.failedCompensations + b.failedCompensations,
    escalatedCompensations: a.escalatedCompensations + b.escalatedCompensations,
    rows: a.rows + b.rows,
    effects: a.effects + b.effects,
    violations: [...a.violations, ...b.violations],
  };
}

/** Figures of nothing. */
export function emptyFigures(): FaultFigures {
  return { duplicateEffects: 0, lostIntents: 0, unapprovedIrreversible: 0, unknownAtRest: 0, failedCompensations: 0, escalatedCompensations: 0, rows: 0, effects: 0, violations: [] };
}

/** The escalated share as printed: `100% (3/3)`, and `100% (0/0)` when nothing failed. */
export function escalatedShare(f: FaultFigures): string {
  const pct = f.failedCompensations === 0 ? 100 : Math.floor((100 * f.escalatedCompensations) / f.failedCompensations);
  return `${pct}% (${f.escalatedCompensations}/${f.failedCompensations})`;
}

/** True when every goal holds (0, 0, 0, 0, 100%). */
export function goalsMet(f: FaultFigures): boolean {
  return f.duplicateEffects === 0 && f.lostIntents === 0 && f.unapprovedIrreversible === 0 && f.unknownAtRest === 0 && f.escalatedCompensations === f.failedCompensations;
}

/** The one line a suite prints: `<suite> [<store>]: duplicate effects=N, ... (figures…)`. */
export function figureLine(suite: string, store: string, f: FaultFigures, extra: Record<string, string | number> = {}): string {
  const more = Object.entries({ rows: f.rows, effects: f.effects, ...extra })
    .map(([k, v]) => `${k}=${v}`)
    .join(", ");
  return (
    `${suite} [${store}]: duplicate effects=${f.duplicateEffects}, lost intents=${f.lostIntents}, ` +
    `unapproved irreversible calls=${f.unapprovedIrreversible}, UNKNOWN rows at rest=${f.unknownAtRest}, ` +
    `failed compensations escalated=${escalatedShare(f)} (${more})`
  );
}

/** The store a suite's figure line names for a Prisma store of this run. */
export function storeLabel(kind: "sqlite" | "postgresql"): string {
  return kind === "postgresql" ? "prisma-postgres" : "prisma-sqlite";
}
