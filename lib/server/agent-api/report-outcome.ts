/** An agent reports what a call it sent did (POST /steps/{id}/outcome): confirmed, failed, or unknown. */
import { recordOutcome } from "@/packages/client/src/saga/calls";
import type { CallOutcomeReport } from "@/packages/client/src/saga/messages";
import { SagaError } from "@/packages/client/src/saga/errors";
import { randomIds } from "@/packages/client/src/saga/ids";
import type { StepRecord } from "@/packages/client/src/saga/store";
import type { AgentPrincipal } from "@/lib/server/tokens/authenticate-agent";
import { agentActor, assertToolInScope, getAgentStep, guardOf, agentApiStore, VIA_API, type AgentCaller } from "./agent-access";
import { getToolPolicy, recentToolPolicy } from "./tool-policy-view";

/** What the agent reports for a step in flight (`attempts`: tries under the key this time). */
export type OutcomeRequest = CallOutcomeReport & { attempts: number };

/**
 * Records an outcome. The common report is one fenced update whose WHERE holds what a read would
 * check (the step INTENDED, its tool in the token's scope, its run the agent's, the token live);
 * when it misses, the reads say why.
 */
export async function reportOutcomeForAgent({ stepId, outcome: request, ...caller }: AgentCaller & { stepId: string; outcome: OutcomeRequest }): Promise<StepRecord> {
  const { prisma } = caller;
  const auth = guardOf(caller);
  const deps = { store: agentApiStore(prisma), ids: randomIds };
  const { attempts, ...outcome } = request;
  const owner = (tool: string) => recentToolPolicy(prisma, tool)?.owner ?? null;
  const report = (principal: AgentPrincipal, activeToken: string | undefined) =>
    recordOutcome(deps, {
      stepId,
      outcome,
      attempts,
      actor: agentActor(principal),
      fence: { tools: principal.tools, ...(principal.role === "worker" ? {} : { runAgent: principal.name }), activeToken },
      owner,
      auditData: VIA_API,
    });
  if (auth.principal.role !== "worker") {
    try {
      return await report(auth.principal, auth.activeToken);
    } catch (e) {
      // Not found or not in flight: the reads below check the step is the agent's before saying which.
      if (!(e instanceof SagaError && (e.code === "STEP_NOT_FOUND" || e.code === "STEP_NOT_IN_FLIGHT"))) throw e;
    }
  }
  const principal = auth.activeToken !== undefined ? await auth.verified() : auth.principal;
  const { step } = await getAgentStep(deps.store, principal, stepId);
  assertToolInScope(principal, step.tool);
  await getToolPolicy(prisma, step.tool); // for the owner of a STUCK_AFTER_PIVOT escalation
  return report(principal, undefined);
}

/** The previous call's outcome as sent with the next command (`previous` of a call or a completion). */
export type PreviousOutcomeRequest = OutcomeRequest & { stepId: string };

/**
 * Records the outcome the agent sent with its next command, before that command: its own commit, as
 * POST /steps/{id}/outcome makes it (a repeat of a request whose answer was lost is answered from the
 * log). A refusal stops the request there, naming `previous`: nothing of the command is done, so the
 * agent learns that the log disagrees with what it believed before it goes on.
 */
export async function reportPreviousOutcome({ previous, ...caller }: AgentCaller & { previous: PreviousOutcomeRequest }): Promise<StepRecord> {
  const { stepId, ...outcome } = previous;
  try {
    return await reportOutcomeForAgent({ ...caller, stepId, outcome });
  } catch (e) {
    if (!(e instanceof SagaError)) throw e;
    const issues = e.issues.length > 0 ? e.issues.map((i) => ({ ...i, path: `previous.${i.path}` })) : [{ path: "previous.stepId", message: e.message }];
    throw new SagaError(e.code, `previous: ${e.message} Nothing else of this request was done.`, issues);
  }
}
