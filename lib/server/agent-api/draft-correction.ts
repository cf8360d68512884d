/** An agent (or a worker pulling a step back) drafts a correction message for a step of its run; support staff send it. */
import type { PrismaClient } from "@/generated/prisma";
import { SagaError } from "@/packages/client/src/saga/errors";
import { randomIds } from "@/packages/client/src/saga/ids";
import type { CorrectionRecord, NewCorrection } from "@/packages/client/src/saga/store";
import type { Json } from "@/packages/client/src/saga/tools";
import { audienceRank } from "@/packages/client/src/saga/vocabulary";
import type { AgentPrincipal } from "@/lib/server/tokens/authenticate-agent";
import { agentActor, getAgentRun, getAgentStep, agentApiStore, type AgentCaller } from "./agent-access";

export async function draftCorrectionForAgent({
  prisma,
  principal,
  runId,
  correction: input,
  event,
}: AgentCaller & { runId: string; correction: Omit<NewCorrection, "runId" | "id"> & { id?: string }; event: { type: string; data?: Json } }): Promise<CorrectionRecord> {
  const store = agentApiStore(prisma);
  await getAgentRun(store, principal, runId);
  const { step } = await getAgentStep(store, principal, input.stepId);
  if (step.runId !== runId) throw new SagaError("STEP_NOT_FOUND", `Step ${input.stepId} is not part of run ${runId}.`);
  // Who receives it comes from what the log recorded for the step (the tool table's audience when the
  // call was begun): the agent's words may add to it, never narrow it, and the rank follows the audience.
  const audience = [...new Set([...step.audience, ...input.audience])];
  const rank = Math.max(input.rank, audienceRank(audience));
  return store.createCorrection({ ...input, audience, rank, id: input.id ?? randomIds.next("cor"), runId, draftedBy: await draftedByOf(prisma, principal, runId) }, { type: event.type, actor: agentActor(principal), data: event.data ?? {} });
}

/** What asked for a worker's correction draft (`revoke:<id>`), read from the task it holds: the server's word, not the client's. */
async function draftedByOf(prisma: PrismaClient, principal: AgentPrincipal, runId: string): Promise<string | null> {
  if (principal.role !== "worker") return null;
  const tasks = await prisma.workerTask.findMany({ where: { runId, status: "CLAIMED" }, select: { payload: true } });
  for (const t of tasks) {
    const draftedBy = (t.payload as { draftedBy?: unknown } | null)?.draftedBy;
    if (typeof draftedBy === "string") return draftedBy;
  }
  return null;
}
