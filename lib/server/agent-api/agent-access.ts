/**
 * Who calls the agent API and what they may touch: every use case in this folder takes an
 * `AgentCaller` with its own fields in one options object, and checks access through these helpers.
 */
import type { PrismaClient } from "@/generated/prisma";
import { ApiError } from "@/packages/client/src/protocol/errors";
import { sharedSagaStore, type PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { escalationSpans } from "@/lib/core/observability/saga-spans";
import { SagaError } from "@/packages/client/src/saga/errors";
import { observeStore } from "@/packages/client/src/saga/observer";
import type { RunRecord, StepRecord } from "@/packages/client/src/saga/store";
import { RunStatus } from "@/packages/client/src/saga/vocabulary";
import type { AgentPrincipal, GuardedAgent } from "@/lib/server/tokens/authenticate-agent";
import { getTask } from "@/lib/server/worker/find-tasks";

/** The caller of a use case, as the route hands it over (lib/delivery/route.ts's agentRoute). */
export interface AgentCaller {
  /** The database the route reads and writes. */
  prisma: PrismaClient;
  /** The token's principal: its name, role and tools. */
  principal: AgentPrincipal;
  /** Set on a guarded write whose token row was not read for this request (see GuardedAgent). */
  activeToken?: string | undefined;
  /** Reads the token row; absent when the row was read for this request. */
  verified?: (() => Promise<AgentPrincipal>) | undefined;
}

/** The caller as a GuardedAgent: what the write paths that skip the token read need. */
export function guardOf(caller: AgentCaller): GuardedAgent {
  const { principal } = caller;
  return { principal, activeToken: caller.activeToken, verified: caller.verified ?? (async () => principal) };
}

/** The principal as the token row says it now: read when this request has not read it yet. */
export async function verifiedPrincipal(caller: AgentCaller): Promise<AgentPrincipal> {
  return caller.activeToken !== undefined && caller.verified ? caller.verified() : caller.principal;
}

/** The run was not found, or belongs to another agent (indistinguishable on purpose). */
export function runNotFound(runId: string): SagaError {
  return new SagaError("RUN_NOT_FOUND", `Run ${runId} does not exist for this agent token.`);
}

// The client behind each agent-API store, so the worker-claim check can read the task table.
const clientOf = new WeakMap<PrismaSagaStore, PrismaClient>();

/**
 * The store the agent API writes through: the process's one store over the client. The escalations
 * the saga raises inside an agent's request (a held call, a failure after the pivot, a failed lookup
 * or compensation) are traced through its observer, in the request's trace.
 */
export function agentApiStore(prisma: PrismaClient): PrismaSagaStore {
  const store = sharedSagaStore(prisma);
  clientOf.set(store, prisma);
  observeStore(store, escalationSpans(prisma));
  return store;
}

/** Whether a worker token holds a live claim on a task of `runId` whose tools are all in its scope. */
async function workerHoldsTask(store: PrismaSagaStore, principal: AgentPrincipal, runId: string): Promise<boolean> {
  const prisma = clientOf.get(store);
  if (!prisma) return false; // fail closed
  const tasks = await prisma.workerTask.findMany({ where: { runId, status: "CLAIMED", leaseUntil: { gt: new Date() } }, select: { tools: true } });
  return tasks.some((t) => Array.isArray(t.tools) && t.tools.every((tool) => typeof tool === "string" && principal.tools.includes(tool)));
}

/** A worker may do what its claimed tasks need, nothing more: only runs it holds a task of (403 otherwise). */
async function assertWorkerMayAct(store: PrismaSagaStore, principal: AgentPrincipal, runId: string): Promise<void> {
  if (principal.role === "worker" && !(await workerHoldsTask(store, principal, runId))) {
    throw new ApiError("FORBIDDEN", `The worker token "${principal.name}" holds no claimed task for run ${runId}: a worker may act only on the runs of the tasks it has claimed (and while its lease lasts). Claim the task first.`);
  }
}

/** Refuses what only the agent that runs the work may do (start runs, propose pivots, ask for unwinds). */
export function assertNotWorker(principal: AgentPrincipal, what: string): void {
  if (principal.role === "worker") {
    throw new ApiError("FORBIDDEN", `The token "${principal.name}" is a worker token: it cannot ${what}. Only the agent that runs the work may; a worker does what its claimed tasks need.`);
  }
}

/** The audit data every write through the agent API carries. */
export const VIA_API = { via: "api" } as const;

/** The audit actor of an agent token. */
export { agentActor } from "@/lib/server/tokens/authenticate-agent";

/** The namespace a tool name sits in (`trip.book_hotel` -> `trip`), or null for a connector the server runs. */
function namespaceOf(tool: string): string | null {
  return tool.includes(".") ? tool.slice(0, tool.lastIndexOf(".")) : null;
}

/**
 * Refuses a tool outside the token's scope (403), naming the field that sent it (`tool`,
 * `plan.2.tool`, `compensation.tool`) and, when it names another team's tool, the namespace it crossed into.
 */
export function assertToolInScope(principal: AgentPrincipal, tool: string, path = "tool"): void {
  if (principal.tools.includes(tool)) return;
  const into = namespaceOf(tool);
  const crossing = into !== null && into !== principal.name;
  throw new ApiError(
    "FORBIDDEN",
    crossing
      ? `${path}: "${tool}" is in the namespace "${into}", outside the token "${principal.name}"'s namespace and scope; a token names only its own team's tools and the ones an admin granted it.`
      : `${path}: the token "${principal.name}" is not allowed to use tool "${tool}"; an admin can add it to the token's tools.`,
    { details: [{ path, message: crossing ? `crosses into the namespace "${into}"` : "outside the token's scope" }] },
  );
}

/** True when the principal may act on the run: its own, or any run for a worker token. */
export function mayActOn(principal: AgentPrincipal, run: RunRecord): boolean {
  return principal.role === "worker" || run.agent === principal.name;
}

/** The run if the caller may act on it; another agent's run is "not found" (no leak). */
export async function getAgentRun(store: PrismaSagaStore, principal: AgentPrincipal, runId: string): Promise<RunRecord> {
  const run = await store.getRun(runId);
  if (!run || !mayActOn(principal, run)) throw runNotFound(runId);
  await assertWorkerMayAct(store, principal, runId);
  return run;
}

/** The step if its run belongs to the calling agent. */
export async function getAgentStep(store: PrismaSagaStore, principal: AgentPrincipal, stepId: string): Promise<{ step: StepRecord; run: RunRecord }> {
  const step = await store.getStep(stepId);
  if (!step) throw new SagaError("STEP_NOT_FOUND", `Step ${stepId} does not exist for this agent token.`);
  const run = await store.getRun(step.runId);
  if (!run || !mayActOn(principal, run)) throw new SagaError("STEP_NOT_FOUND", `Step ${stepId} does not exist for this agent token.`);
  await assertWorkerMayAct(store, principal, run.id);
  return { step, run };
}

const CLOSED: readonly RunStatus[] = [RunStatus.COMPLETED, RunStatus.UNWOUND, RunStatus.NEEDS_ATTENTION];

/** Refuses new intents on a finished run. */
export function assertRunOpen(run: RunRecord): void {
  if (run.status === RunStatus.UNWINDING) {
    throw new SagaError("RUN_CLOSED", `Run ${run.id} is being pulled back (a person pulled its revoke trigger, or it is being unwound): it takes no more tool calls. Stop here; what it did is being undone in reverse order.`);
  }
  if (CLOSED.includes(run.status)) {
    throw new SagaError("RUN_CLOSED", `Run ${run.id} is ${run.status} and takes no more tool calls; start a new run.`);
  }
}

/** Refuses an agent token where a worker token is needed (claiming and settling tasks). */
export function assertWorker(principal: AgentPrincipal): void {
  if (principal.role !== "worker") {
    throw new ApiError("FORBIDDEN", `The token "${principal.name}" is an agent token; claiming and settling tasks takes a worker token (npm run token -- create --role worker ...).`);
  }
}

/** The task, if it is within the worker token's scope (otherwise it does not exist for it). */
export async function getScopedTask(prisma: PrismaClient, principal: AgentPrincipal, taskId: string) {
  assertWorker(principal);
  const task = await getTask(prisma, taskId);
  if (!task || !task.tools.every((t) => principal.tools.includes(t))) {
    throw new ApiError("NOT_FOUND", `Task ${taskId} does not exist for this worker token.`);
  }
  return task;
}
