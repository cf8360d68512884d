import { z } from "zod";
import type { PersonRequest } from "@/lib/server/auth/current-user";
import { assertCan } from "@/lib/server/auth/roles";
import { ApiError } from "@/packages/client/src/protocol/errors";
import { EscalationKind, PIVOT_REJECTION_CODES } from "@/packages/client/src/saga/vocabulary";
import { claimEscalation } from "./claim-escalation";
import { withDb } from "@/lib/desks/dashboard/context";
import { escalationTool } from "./escalation-view";
import { resolveEscalation } from "./resolve-escalation";
import type { TBulkDecisionResult } from "@/lib/desks/escalations/views";

/** One decision for several held calls of one tool. */
export const ZDecideHeldCallsRequest = z
  .object({
    /** The APPROVAL_REQUIRED escalations, all of one tool; each is decided on its own. */
    escalationIds: z.array(z.string().trim().min(1).max(80)).min(1, "select at least one held call").max(100),
    /** Approve (each call may run once) or reject. */
    approve: z.boolean(),
    /** One reason for all of them; required when rejecting (each agent is told). */
    note: z.string().trim().max(4000).optional(),
    /** A rejection's code (what the agents should do next). */
    reasonCode: z.enum(PIVOT_REJECTION_CODES).optional(),
  })
  .refine((r) => r.approve || Boolean(r.note), { path: ["note"], message: "say why the calls are refused: each agent is told" });
/** A bulk decision request. */
export type TDecideHeldCallsRequest = z.input<typeof ZDecideHeldCallsRequest>;

/**
 * Approves or rejects several held calls of the same tool with one reason, each recorded on its
 * own (its claim, its resolution and their audit events), all-or-nothing per item: an item already
 * decided, or held by someone else, is skipped and reported, never decided twice. Approval lets
 * each exact call run once, when its agent calls it again (the gate consumes the approval), so a
 * repeated request changes nothing. Refused (400) when the items are not held calls of one tool.
 */
export async function decideHeldCalls({ actor, ...request }: PersonRequest<TDecideHeldCallsRequest>): Promise<TBulkDecisionResult> {
  assertCan(actor, "escalation.resolve");
  const input = ZDecideHeldCallsRequest.parse(request);
  const ids = [...new Set(input.escalationIds)];
  const rows = await withDb((prisma) =>
    prisma.escalation.findMany({ where: { id: { in: ids } }, select: { id: true, kind: true, detail: true, step: { select: { tool: true } } } }),
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  const missing = ids.filter((id) => !byId.has(id));
  if (missing.length > 0) throw new ApiError("NOT_FOUND", `No escalation ${missing.join(", ")}; reload the queue.`);
  const notHeld = rows.filter((r) => r.kind !== EscalationKind.APPROVAL_REQUIRED);
  if (notHeld.length > 0) {
    throw new ApiError("VALIDATION_FAILED", `Only held calls (approval required) can be decided together; ${notHeld.map((r) => r.id).join(", ")} ${notHeld.length === 1 ? "is" : "are"} not.`, {
      details: [{ path: "escalationIds", message: "not a held call" }],
    });
  }
  const tools = new Set(rows.map((r) => escalationTool(r)));
  if (tools.size > 1) {
    throw new ApiError("VALIDATION_FAILED", `Held calls of one tool only: these are calls of ${[...tools].join(", ")}. Decide each tool's calls separately.`, {
      details: [{ path: "escalationIds", message: "more than one tool" }],
    });
  }

  const items: TBulkDecisionResult["items"] = [];
  for (const id of ids) {
    try {
      const claim = await claimEscalation({ actor, escalationId: id });
      if (!claim.ok) {
        const message =
          claim.reason === "resolved" ? `already decided by ${claim.resolvedBy ?? "someone"}` : claim.reason === "held" ? `held by ${claim.heldBy}` : "nobody holds it";
        items.push({ escalationId: id, outcome: "skipped", message });
        continue;
      }
      const resolved = await resolveEscalation({
        actor,
        escalationId: id,
        kind: EscalationKind.APPROVAL_REQUIRED,
        approve: input.approve,
        ...(input.note ? { note: input.note } : {}),
        ...(!input.approve && input.reasonCode ? { reasonCode: input.reasonCode } : {}),
      });
      if (resolved.ok) items.push({ escalationId: id, outcome: "decided", message: null });
      else items.push({ escalationId: id, outcome: "skipped", message: resolved.reason === "resolved" ? `already decided by ${resolved.resolvedBy ?? "someone"}` : `held by ${resolved.heldBy ?? "someone"}` });
    } catch (e) {
      items.push({ escalationId: id, outcome: "failed", message: e instanceof Error ? e.message : String(e) });
    }
  }
  const count = (o: string) => items.filter((i) => i.outcome === o).length;
  return { items, decided: count("decided"), skipped: count("skipped"), failed: count("failed") };
}
