import { z } from "zod";
import { type PersonRequest, userActor } from "@/lib/server/auth/current-user";
import { assertCan } from "@/lib/server/auth/roles";
import { getPrisma } from "@/lib/core/db/prisma";
import { sharedSagaStore } from "@/lib/core/db/prisma-saga-store";
import { ZJson } from "@/packages/client/src/protocol/schemas/saga";
import { editPivotPlanItem } from "@/packages/client/src/saga/edit-pivot-plan";
import { connectorRegistry } from "@/lib/desks/dashboard/context";
import { getPivotScreen } from "./get-pivot-screen";
import { lockedArgChanges, lockedArgMessage, storedEditableArgs } from "@/lib/server/tools/reviewer-edits";
import type { TEditPlanItemResult } from "@/lib/desks/pivots/views";

/** A reviewer's edit of one plan item, bound to the plan the page loaded. */
export const ZEditPlanItemRequest = z.object({
  /** The pivot. */
  pivotId: z.string().trim().min(1).max(80),
  /** The plan hash the reviewer's page loaded. */
  planHash: z.string().trim().min(1).max(128),
  /** The plan item's position, from 0. */
  itemIdx: z.number().int().min(0).max(999),
  /** The item's new arguments, whole; the tool's own schema checks them. */
  args: ZJson,
  /** Why (the agent and the audit log read it). */
  note: z.string().trim().max(2000).nullable().optional(),
});
/** An edit request. */
export type TEditPlanItemRequest = z.input<typeof ZEditPlanItemRequest>;

/**
 * Edits one plan item of a pending pivot as the signed-in reviewer (packages/client/src/saga/edit-pivot-plan.ts):
 * the plan and its hash become the edited ones, the diff is recorded on the pivot and in the audit
 * log, and the screen comes back as it is now, so the reviewer decides on the edited plan. Refusals
 * a person can act on are values; arguments that do not fit the tool are a 400 naming the field.
 */
export async function editPlanItem({ actor, ...request }: PersonRequest<TEditPlanItemRequest>): Promise<TEditPlanItemResult> {
  assertCan(actor, "pivot.decide");
  const input = ZEditPlanItemRequest.parse(request);
  const prisma = await getPrisma();
  const store = sharedSagaStore(prisma);
  // Who or what a call acts on stays the agent's proposal unless the tool table opens it to reviewers.
  const item = (await store.getPivot(input.pivotId))?.plan[input.itemIdx];
  if (item) {
    const editable = storedEditableArgs((await prisma.toolPolicy.findUnique({ where: { name: item.tool }, select: { reviewerEditableArgs: true } }))?.reviewerEditableArgs);
    const locked = lockedArgChanges(item.args, input.args, editable);
    if (locked.length > 0) return { ok: false, reason: "argument_locked", decidedBy: null, arguments: locked, message: lockedArgMessage(item.tool, locked, editable) };
  }
  const result = await editPivotPlanItem(
    { store, registry: connectorRegistry() },
    { pivotId: input.pivotId, planHash: input.planHash, itemIdx: input.itemIdx, args: input.args, note: input.note ?? null, actor: userActor(actor) },
  );
  if (!result.ok) return { ok: false, reason: result.reason, decidedBy: "pivot" in result ? result.pivot.decidedBy : null, arguments: [], message: null };
  return { ok: true, edit: result.edit, screen: await getPivotScreen({ actor, pivotId: input.pivotId }) };
}
