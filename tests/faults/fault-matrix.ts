/**
 * The fault matrix's second pass prints one line per fault, in one shape for every suite:
 *   fault-matrix: <name> store=<sqlite|postgresql> trials=N duplicates=0 lost=0 unknown_at_rest=0 escalated=K
 * The figures come from the oracle (tests/support/fault-oracle.ts: the simulated systems' ledgers
 * against the saga log); `escalated` is how many items the trials left to a person. Each line is also
 * appended to the file named by SAGABOARD_FAULT_MATRIX_FILE, so `npm run test:faults`
 * (tests/faults/run-matrix.ts) can print the whole table after both stores ran.
 */
import { appendFileSync } from "node:fs";
import type { PrismaClient } from "@/lib/core/db/prisma";
import type { EscalationRecord, SagaStore, StepRecord } from "@/packages/client/src/saga/store";
import type { LedgerEntry } from "@/lib/demo/sim/ledger";
import { computeFigures, type FaultFigures } from "../support/fault-oracle";
import { testStoreKind } from "../support/test-database";

/** Trials per fault: a few in CI (seconds per suite), more with SAGABOARD_FAULT_MATRIX_TRIALS. */
export const MATRIX_TRIALS = Number(process.env.SAGABOARD_FAULT_MATRIX_TRIALS ?? "2");

/** One fault's figures over its trials. */
export interface MatrixRow {
  /** `<suite>:<fault>`. */
  name: string;
  /** Trials run. */
  trials: number;
  /** The oracle's figures over every run of those trials. */
  figures: FaultFigures;
  /** Items the trials left to a person (escalations raised, open or resolved). */
  escalated: number;
}

/** The line a fault prints. */
export function matrixLine(row: MatrixRow, store: string = testStoreKind()): string {
  const f = row.figures;
  return `fault-matrix: ${row.name} store=${store} trials=${row.trials} duplicates=${f.duplicateEffects} lost=${f.lostIntents} unknown_at_rest=${f.unknownAtRest} escalated=${row.escalated}`;
}

/** Prints the line and keeps it for the table (SAGABOARD_FAULT_MATRIX_FILE). */
export function recordMatrixLine(line: string): void {
  console.log(line);
  const file = process.env.SAGABOARD_FAULT_MATRIX_FILE;
  if (file) appendFileSync(file, `${line}\n`);
}

/** The oracle over `runIds` and the ledger entries from `ledger` (everything one fault's trials did). */
export async function figuresFor(store: SagaStore, ledger: readonly LedgerEntry[], runIds: readonly string[]): Promise<{ figures: FaultFigures; escalations: EscalationRecord[] }> {
  const steps: StepRecord[] = [];
  const escalations: EscalationRecord[] = [];
  for (const id of runIds) {
    steps.push(...(await store.listSteps(id)));
    escalations.push(...(await store.listEscalations({ runId: id })));
  }
  return { figures: computeFigures(ledger, steps, escalations), escalations };
}

/**
 * Moves an item's creation back by `seconds`: the suites stand in for "nobody answered for a day"
 * this way instead of sleeping. The SLA sweep judges age by the database clock against createdAt,
 * so this is exactly what a day of silence looks like to it.
 */
export async function backdate(prisma: PrismaClient, item: { pivotId?: string; escalationId?: string }, seconds: number): Promise<void> {
  const shift = (d: Date) => new Date(d.getTime() - seconds * 1000);
  if (item.pivotId) {
    const row = await prisma.pivot.findUniqueOrThrow({ where: { id: item.pivotId }, select: { createdAt: true } });
    await prisma.pivot.update({ where: { id: item.pivotId }, data: { createdAt: shift(row.createdAt) } });
  }
  if (item.escalationId) {
    const row = await prisma.escalation.findUniqueOrThrow({ where: { id: item.escalationId }, select: { createdAt: true } });
    await prisma.escalation.update({ where: { id: item.escalationId }, data: { createdAt: shift(row.createdAt) } });
  }
}
