/** Runs for agents: create, read the whole log (for resume), list their own, move their status. */
import type { PrismaClient } from "@/generated/prisma";
import { randomIds } from "@/lib/saga/ids";
import type { AuditEventRecord, CorrectionRecord, EscalationRecord, PivotRecord, RunRecord, StepRecord } from "@/lib/saga/store";
import type { Json } from "@/lib/saga/tools";
import { SagaError } from "@/lib/saga/errors";
import { EscalationStatus, RunStatus, StepStatus, UNSETTLED_STATUSES } from "@/lib/saga/vocabulary";
import { agentActor, assertNotWorker, getAgentRun, harnessStore } from "./access";
import { ApiError } from "./errors";
import type { AgentPrincipal } from "./principal";

/** Input of a new run. */
export interface CreateRunInput {
  /** What the run is for. */
  title: string;
  /** Who the agent acts for. */
  onBehalfOf?: string | null;
  /** Harness data. */
  metadata?: Json;
}

export async function createRunForAgent(prisma: PrismaClient, principal: AgentPrincipal, input: CreateRunInput): Promise<RunRecord> {
  assertNotWorker(principal, "start a run");
  return harnessStore(prisma).createRun(
    { id: randomIds.next("run"), title: input.title, agent: principal.name, onBehalfOf: input.onBehalfOf ?? null, metadata: input.metadata ?? {} },
    { type: "run.started", actor: agentActor(principal), data: { title: input.title, via: "api" } },
  );
}

/** Everything resume needs, read from the log. */
export interface RunLog {
  /** The run. */
  run: RunRecord;
  /** Its saga log by stepIdx. */
  steps: StepRecord[];
  /** Its pivots. */
  pivots: PivotRecord[];
  /** Its escalations. */
  escalations: EscalationRecord[];
  /** Its correction drafts. */
  corrections: CorrectionRecord[];
}

export async function getRunLog(prisma: PrismaClient, principal: AgentPrincipal, runId: string): Promise<RunLog> {
  const store = harnessStore(prisma);
  const run = await getAgentRun(store, principal, runId);
  const [steps, pivots, escalations, corrections] = [
    await store.listSteps(runId),
    await store.listPivots(runId),
    await store.listEscalations({ runId }),
    await store.listCorrections(runId),
  ];
  return { run, steps, pivots, escalations, corrections };
}

export async function getRunAudit(prisma: PrismaClient, principal: AgentPrincipal, runId: string): Promise<AuditEventRecord[]> {
  const store = harnessStore(prisma);
  await getAgentRun(store, principal, runId);
  return store.listAuditEvents(runId);
}

/** The calling agent's runs, newest first, paged by id cursor. */
export async function findAgentRuns(
  prisma: PrismaClient,
  principal: AgentPrincipal,
  page: { cursor?: string; take: number; status?: RunStatus },
): Promise<{ runs: RunRecord[]; nextCursor: string | null }> {
  const store = harnessStore(prisma);
  const rows = await prisma.run.findMany({
    where: { agent: principal.name, ...(page.status ? { status: page.status } : {}) },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: page.take + 1,
    ...(page.cursor ? { cursor: { id: page.cursor }, skip: 1 } : {}),
    select: { id: true },
  });
  const runs: RunRecord[] = [];
  for (const row of rows.slice(0, page.take)) {
    const run = await store.getRun(row.id);
    if (run) runs.push(run);
  }
  return { runs, nextCursor: rows.length > page.take ? (rows[page.take - 1]?.id ?? null) : null };
}

/** The moves an agent may make on its run's status; pivots and people make the others. */
const AGENT_MOVES: Partial<Record<RunStatus, readonly RunStatus[]>> = {
  [RunStatus.COMPLETED]: [RunStatus.RUNNING, RunStatus.COMMITTING],
  [RunStatus.UNWINDING]: [RunStatus.RUNNING, RunStatus.AWAITING_PIVOT, RunStatus.COMMITTING, RunStatus.COMPLETED, RunStatus.UNWINDING, RunStatus.NEEDS_ATTENTION],
  [RunStatus.UNWOUND]: [RunStatus.UNWINDING],
  [RunStatus.NEEDS_ATTENTION]: [RunStatus.UNWINDING],
};

export async function setRunStatusForAgent(
  prisma: PrismaClient,
  principal: AgentPrincipal,
  runId: string,
  input: { from: RunStatus[] | null; to: RunStatus; type: string; data?: Json },
): Promise<RunRecord | null> {
  const store = harnessStore(prisma);
  await getAgentRun(store, principal, runId);
  const allowed = AGENT_MOVES[input.to];
  if (!allowed) {
    throw new ApiError("FORBIDDEN", `An agent cannot move a run to ${input.to}; that takes a pivot decision or a person.`, { details: [{ path: "to", message: "not an agent move" }] });
  }
  if (input.to === RunStatus.COMPLETED || input.to === RunStatus.UNWOUND) await assertRunSettled(store, runId, input.to);
  const from = input.from ? input.from.filter((s) => allowed.includes(s)) : allowed;
  return store.setRunStatus(runId, from, input.to, { type: input.type, actor: agentActor(principal), data: input.data ?? {} });
}

/**
 * A run is finished only when its log says so: no step unsettled (COMPLETED and UNWOUND), and for
 * UNWOUND nothing left out there: no confirmed effect that was neither compensated nor answered by a
 * person, no failed compensation without a manual repair, no open item for people.
 */
async function assertRunSettled(store: ReturnType<typeof harnessStore>, runId: string, to: RunStatus): Promise<void> {
  const steps = await store.listSteps(runId);
  const open = steps.find((s) => UNSETTLED_STATUSES.includes(s.status));
  if (open) {
    throw new SagaError("RUN_NOT_SETTLED", `Run ${runId} cannot be ${to}: step ${open.stepIdx} (${open.tool}) is ${open.status}; reconcile it first.`, [
      { path: "to", message: `step ${open.stepIdx} is unsettled` },
    ]);
  }
  if (to !== RunStatus.UNWOUND) return;
  const left = steps.find((s) => s.status === StepStatus.CONFIRMED || (s.status === StepStatus.COMPENSATION_FAILED && !s.manualRepair));
  if (left) {
    throw new SagaError("RUN_NOT_SETTLED", `Run ${runId} cannot be UNWOUND: step ${left.stepIdx} (${left.tool}) is ${left.status}, so its effect is still out there; compensate it, or leave the run NEEDS_ATTENTION for a person.`, [
      { path: "to", message: `step ${left.stepIdx} is not undone` },
    ]);
  }
  const people = await store.listEscalations({ runId, status: [EscalationStatus.OPEN, EscalationStatus.CLAIMED] });
  if (people.length > 0) {
    throw new SagaError("RUN_NOT_SETTLED", `Run ${runId} cannot be UNWOUND while ${people.length} item(s) wait for people (${people[0]!.kind}); it is NEEDS_ATTENTION until they are resolved.`, [
      { path: "to", message: "open escalations" },
    ]);
  }
}
