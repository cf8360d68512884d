import { getPrisma } from "@/lib/core/db/prisma";
import { revealPersonal } from "@/lib/core/privacy/personal-data-vault";
import type { Prisma } from "@/generated/prisma";
import { stepStanding } from "@/packages/client/src/saga/step-standing";
import { resolveAudience } from "@/lib/server/tools/audience";
import type { PersonRequest } from "@/lib/server/auth/current-user";
import { assertCan } from "@/lib/server/auth/roles";
import { mayWorkEscalation } from "./escalation-access";
import { databaseNow } from "@/lib/core/db/dialect";
import { ZCompensationState, ZManualRepairWire, ZRunStatus, ZStepStatus, ZToolClass } from "@/packages/client/src/protocol/schemas/saga";
import { SagaError } from "@/packages/client/src/saga/errors";
import type { Json } from "@/packages/client/src/saga/tools";
import { EscalationKind, EscalationStatus } from "@/packages/client/src/saga/vocabulary";
import { connectorRegistry, withDb } from "@/lib/desks/dashboard/context";
import { planAudience } from "@/lib/desks/pivots/pivot-view";
import { readToolPolicies, type ToolPolicyFacts } from "@/lib/server/tools/tool-policies";
import { ESCALATION_INCLUDE, queueItem, toolSystems } from "./escalation-view";
import type { TEscalationDetail } from "@/lib/desks/escalations/views";

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

function heldAudience(tool: string, args: Json, policy: ToolPolicyFacts | undefined): { audience: string[] | null; audienceSource: "tool" | "tool_table" | "unknown" } {
  const { audience, source } = planAudience(connectorRegistry(), { tool, args }, policy);
  return { audience, audienceSource: source };
}

/**
 * One escalation with what its resolution form needs: the held call, or the step with its external
 * ref and what is still out there; whether the signed-in user holds the claim. Throws
 * ESCALATION_NOT_FOUND.
 */
export async function getEscalation(request: PersonRequest<{ escalationId: string }>): Promise<TEscalationDetail> {
  const view = await getEscalationStored(request);
  // Personal fields are stored sealed: opened here, or "erased on <date>" (lib/core/privacy/ARCHITECTURE.md).
  // Not inside withDb: the reveal queues its one read of the keys on the same connection itself.
  return revealPersonal(await getPrisma(), view);
}

async function getEscalationStored({ actor, escalationId }: PersonRequest<{ escalationId: string }>): Promise<TEscalationDetail> {
  assertCan(actor, "read");
  const found = await withDb(async (prisma) => {
    const row = await prisma.escalation.findUnique({
      where: { id: escalationId },
      include: { ...ESCALATION_INCLUDE, run: true, step: true },
    });
    const tool = row?.step?.tool;
    const heldTool = row?.kind === EscalationKind.APPROVAL_REQUIRED ? text(field(row.detail, "tool")) : null;
    const policies = await readToolPolicies(prisma, connectorRegistry(), [tool, heldTool].filter((t): t is string => typeof t === "string"));
    return { row, audienceRule: (tool && policies.get(tool)?.audienceRule) ?? null, heldPolicy: heldTool ? policies.get(heldTool) : undefined, now: await databaseNow(prisma) };
  });
  const { row, audienceRule, heldPolicy, now } = found;
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
          // Who would see it, named in the confirmation before anyone lets it run.
          ...heldAudience(text(field(row.detail, "tool")) ?? "", json(field(row.detail, "args") ?? null), heldPolicy),
        }
      : null;
  const me = actor.email;
  const mayWork = mayWorkEscalation(actor.role, row);
  const [canClaim, canResolve] = [mayWork, mayWork];
  return {
    escalation: {
      ...queueItem({ ...row, run: { id: run.id, title: run.title }, step: step ? { id: step.id, stepIdx: step.stepIdx, tool: step.tool } : null }, now, await toolSystems([row])),
      detail: json(row.detail),
      resolution: row.resolution === null ? null : json(row.resolution),
    },
    run: { id: run.id, title: run.title, agent: run.agent, onBehalfOf: run.onBehalfOf, status: ZRunStatus.parse(run.status) },
    step: step
      ? {
          id: step.id,
          stepIdx: step.stepIdx,
          tool: step.tool,
          toolClass: ZToolClass.parse(step.toolClass),
          status: ZStepStatus.parse(step.status),
          standing: stepStanding(step),
          stepKey: step.stepKey,
          args: json(step.args),
          externalRef: step.externalRef,
          result: step.result === null ? null : json(step.result),
          error: step.error === null ? null : json(step.error),
          // What was recorded, else the tool table's rule on the arguments, else unknown (customer-facing).
          audience: resolveAudience(Array.isArray(step.audience) ? step.audience.filter((a): a is string => typeof a === "string") : [], audienceRule, step.args).audience,
          compensation: step.compensation === null ? null : compensationOf(step.compensation),
          compensationState: ZCompensationState.parse(step.compensationState),
          compensationRef: step.compensationRef,
          compensationError: step.compensationError === null ? null : json(step.compensationError),
          manualRepair: ZManualRepairWire.nullable().catch(null).parse(step.manualRepair),
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
