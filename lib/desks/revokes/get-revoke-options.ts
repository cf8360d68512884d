import type { PersonRequest } from "@/lib/server/auth/current-user";
import { assertCan, can } from "@/lib/server/auth/roles";
import { databaseNow } from "@/lib/core/db/dialect";
import { getPrisma } from "@/lib/core/db/prisma";
import { onConnection } from "@/lib/core/db/transactions";
import { SagaError } from "@/packages/client/src/saga/errors";
import { StepStatus, ToolClass } from "@/packages/client/src/saga/vocabulary";
import { stepStanding } from "@/packages/client/src/saga/step-standing";
import { revokeRolesOf, revokeWindow, summarizeRevokes, whatHappens } from "./revoke-rules";
import { RevokeKind, RevokeState, type TRevokeOptions } from "./views";

/** Steps that can have been pulled back: confirmed effects, and those a revoke already answered. */
const SHOWN: readonly string[] = [StepStatus.CONFIRMED, StepStatus.COMPENSATED, StepStatus.COMPENSATION_FAILED];

/**
 * What the revoke trigger offers on a run, for the signed-in person: each confirmed step of a logged
 * class with the time left in its window (by the database clock), what pulling it would do, and
 * whether this person's role may; the revokes already pulled and how they ended.
 */
export async function getRevokeOptions({ actor, runId }: PersonRequest<{ runId: string }>): Promise<TRevokeOptions> {
  assertCan(actor, "read");
  const prisma = await getPrisma();
  const [run, steps, revokes, now] = await onConnection(prisma, async () => [
    await prisma.run.findUnique({ where: { id: runId }, select: { id: true, status: true } }),
    await prisma.step.findMany({ where: { runId, status: { in: [...SHOWN] }, toolClass: { not: ToolClass.PURE } }, orderBy: { stepIdx: "desc" } }),
    await prisma.revoke.findMany({ where: { runId }, orderBy: { requestedAt: "asc" } }),
    await databaseNow(prisma),
  ] as const);
  if (!run) throw new SagaError("RUN_NOT_FOUND", `Run ${runId} does not exist. Open the runs list to find it.`);
  const policies = await onConnection(prisma, () => prisma.toolPolicy.findMany({ where: { name: { in: [...new Set(steps.map((s) => s.tool))] } } }));
  const summaries = await summarizeRevokes(prisma, revokes);
  const canPull = can(actor.role, "revoke.pull");
  return {
    runId,
    runStatus: run.status,
    now: now.toISOString(),
    canPull,
    runRevoke: summaries.find((r) => r.kind === RevokeKind.RUN) ?? null,
    steps: steps
      .map((step) => {
        const policy = policies.find((p) => p.name === step.tool) ?? null;
        const window = revokeWindow(step, policy, now);
        const roles = revokeRolesOf(policy);
        const revoke = summaries.find((r) => r.stepId === step.id) ?? null;
        const state = revoke || step.status !== StepStatus.CONFIRMED ? RevokeState.pulled : !roles.includes(actor.role) ? RevokeState.not_permitted : window.open ? RevokeState.pullable : RevokeState.out_of_window;
        return {
          stepId: step.id,
          stepIdx: step.stepIdx,
          tool: step.tool,
          toolClass: step.toolClass,
          // Where it stands for a person (the one rule): a failed undo answered by hand is not still out there.
          status: stepStanding(step),
          externalRef: step.externalRef,
          state,
          windowEndsAt: window.endsAt?.toISOString() ?? null,
          secondsLeft: window.endsAt ? Math.max(0, Math.floor((window.endsAt.getTime() - now.getTime()) / 1000)) : null,
          whatHappens: whatHappens(step, policy, window),
          allowedRoles: roles,
          revoke,
        };
      }),
  };
}
