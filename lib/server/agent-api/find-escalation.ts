/** The escalation with a dedupe key, if it is on a run the caller may act on (otherwise none). */
import type { EscalationRecord } from "@/packages/client/src/saga/store";
import { getAgentRun, agentApiStore, type AgentCaller } from "./agent-access";

export async function findEscalationForAgent({ prisma, principal, dedupeKey }: AgentCaller & { dedupeKey: string }): Promise<EscalationRecord | null> {
  const store = agentApiStore(prisma);
  const escalation = await store.findEscalationByDedupeKey(dedupeKey);
  if (!escalation) return null;
  // The same rule as every run read: another agent's run, or (for a worker) one it holds no task of, is not there.
  const run = await getAgentRun(store, principal, escalation.runId).catch(() => null);
  return run ? escalation : null;
}
