import type { Prisma } from "@/generated/prisma";
import { requireUser } from "@/lib/auth/current-user";
import { mayWorkEscalation } from "./escalation-access";
import { databaseNow } from "@/lib/db/dialect";
import { CompensationStateSchema, ManualRepairWire, RunStatusSchema, StepStatusSchema, ToolClassSchema } from "@/lib/api/schemas/saga";
import { SagaError } from "@/lib/saga/errors";
import type { Json } from "@/lib/saga/tools";
import { EscalationKind, EscalationStatus } from "@/lib/saga/vocabulary";
import { withDb } from "@/lib/dashboard/context";
import { ESCALATION_INCLUDE, queueItem, toolSystems } from "./escalation-view";
import type { TEscalationDetail } from "@/lib/dashboard/views";

function json(value: Prisma.JsonValue): Json {
  return value as Json;
}

function field(detail: Prisma.JsonValue, name: string): Prisma.JsonValue | undefined {
  return detail && typeof detail === "object" && !Array.isArray(detail) ? detail[name] : undefined;
}

function text(value: Prisma.JsonValue | undefined): string | null {
  return typeof value === "string" ? value : null;
}

function compensationOf(value: Prisma.JsonValue): { tool: string; args: Json } | null {
  const tool = text(field(value, "tool"));
  return tool ? { tool, args: json(field(value, "args") ?? null) } : null;
}

/**
 * One escalation with what its resolution form needs: the held call, or the step with its external
 * ref and what is still out there; whether the signed-in user holds the claim. Throws
 * ESCALATION_NOT_FOUND.
 */
export async function getEscalation(escalationId: string): Promise<TEscalationDetail> {
  const user = await requireUser("read");
  const found = await withDb(async (prisma) => {
    const row = await prisma.escalation.findUnique({
      where: { id: escalationId },
      include: { ...ESCALATION_INCLUDE, run: true, step: true },
    });
    return { row, now: await databaseNow(prisma) };
  });
  const { row, now } = found;
  if (!row) throw new SagaError("ESCALATION_NOT_FOUND", `Escalation ${escalationId} does not exist; open the escalation queue to find it.`);
  const { run, step } = row;
  const held =
    row.kind === EscalationKind.APPROVAL_REQUIRED
      ? {
          tool: text(field(row.detail, "tool")) ?? "(unknown tool)",
          toolClass: text(field(row.detail, "toolClass")),
          args: json(field(row.detail, "args") ?? null),
          reason: text(field(row.detail, "reason")),
          message: text(field(row.detail, "message")),
        }
      : null;
  const me = user.email;
  const mayWork = mayWorkEscalation(user.role, row);
  const [canClaim, canResolve] = [mayWork, mayWork];
  return {
    escalation: {
      ...queueItem({ ...row, run: { id: run.id, title: run.title }, step: step ? { id: step.id, stepIdx: step.stepIdx, tool: step.tool } : null }, now, await toolSystems([row])),
      detail: json(row.detail),
      resolution: row.resolution === null ? null : json(row.resolution),
    },
    run: { id: run.id, title: run.title, agent: run.agent, onBehalfOf: run.onBehalfOf, status: RunStatusSchema.parse(run.status) },
    step: step
      ? {
          id: step.id,
          stepIdx: step.stepIdx,
          tool: step.tool,
          toolClass: ToolClassSchema.parse(step.toolClass),
          status: StepStatusSchema.parse(step.status),
          stepKey: step.stepKey,
          args: json(step.args),
          externalRef: step.externalRef,
          result: step.result === null ? null : json(step.result),
          error: step.error === null ? null : json(step.error),
          audience: Array.isArray(step.audience) ? step.audience.filter((a): a is string => typeof a === "string") : [],
          compensation: step.compensation === null ? null : compensationOf(step.compensation),
          compensationState: CompensationStateSchema.parse(step.compensationState),
          compensationRef: step.compensationRef,
          compensationError: step.compensationError === null ? null : json(step.compensationError),
          manualRepair: ManualRepairWire.nullable().catch(null).parse(step.manualRepair),
          createdAt: step.createdAt.toISOString(),
          updatedAt: step.updatedAt.toISOString(),
        }
      : null,
    heldCall: held,
    me,
    now: now.toISOString(),
    abilities: {
      canClaim,
      canResolve,
      isClaimer: row.status === EscalationStatus.CLAIMED && row.claimedBy === me,
    },
  };
}
