/**
 * An admin decides a team's proposed change to a tool's row: accepting copies the proposed fields
 * over the row as an edit (checked, versioned, audited like any edit; an unreviewed tool is reviewed
 * by it), refusing drops the proposal and leaves the row in force exactly as it was. Either way the
 * decision is bound to the version the admin's page showed.
 */
import * as z from "zod";
import { Prisma, type PrismaClient } from "@/generated/prisma";
import { ApiError, validationError, zodIssuesToDetails } from "@/packages/client/src/protocol/errors";
import { appendAuditLink } from "@/lib/core/db/audit-chain";
import { onConnection, writeTransaction } from "@/lib/core/db/transactions";
import type { Actor } from "@/packages/client/src/saga/store";
import type { Json } from "@/packages/client/src/saga/tools";
import { ToolStatus } from "@/packages/client/src/saga/vocabulary";
import { ZToolName } from "@/lib/server/tokens/token-fields";
import { registeredCompensators } from "./find-tools";
import { toolNotFound } from "./get-tool";
import { storedProposal } from "./tool-proposal";
import { toolScope } from "./tool-versions";
import { editTool, ProposalUse } from "./edit-tool";
import { toToolRow, type TToolEditResult } from "./views";

/** An admin's decision on a tool's pending proposal. */
export const ZDecideToolProposalRequest = z.object({
  /** The tool. */
  name: ZToolName,
  /** The policy version the admin's page showed. */
  expectedVersion: z.number().int().min(1),
  /** accept: the proposal becomes the row (a new version); refuse: the proposal is dropped. */
  decision: z.enum(["accept", "refuse"], { error: "Say accept or refuse." }),
  /** Why, for the history and the audit log. */
  reason: z.string().trim().max(500).optional(),
  /** Accepting a declared tool that has no argument schema, knowing its calls will take any JSON. */
  acceptWithoutArgsSchema: z.boolean().default(false),
});
/** An admin's decision on a tool's pending proposal. */
export type TDecideToolProposalRequest = z.input<typeof ZDecideToolProposalRequest>;

/** Decides a tool's proposal as `actor` (the desk, or `npm run tools -- accept|refuse`). */
export async function settleToolProposal(prisma: PrismaClient, request: TDecideToolProposalRequest, actor: Actor): Promise<TToolEditResult> {
  const parsed = ZDecideToolProposalRequest.safeParse(request);
  if (!parsed.success) throw validationError(zodIssuesToDetails(parsed.error), "The decision");
  const { name, expectedVersion, decision, reason, acceptWithoutArgsSchema } = parsed.data;
  const [row, compensators] = await onConnection(prisma, async () => [await prisma.toolPolicy.findUnique({ where: { name } }), await registeredCompensators(prisma)] as const);
  if (!row) throw toolNotFound(name);
  const connectors = { lookupAvailable: row.lookupAvailable, compensators };
  const proposal = storedProposal(row.proposal);
  if (row.policyVersion !== expectedVersion) {
    return { ok: false, reason: "version_changed", current: toToolRow(row, connectors), message: `${name} was changed by ${row.updatedBy ?? "someone"} since your page loaded (now version ${row.policyVersion}); look at the row and its proposal again.` };
  }
  if (!proposal) {
    throw new ApiError("CONFLICT", `${name} has no proposal waiting: it was decided already, or its team's latest declaration suggests nothing that differs from the row. Reload the tool's page.`);
  }
  if (decision === "accept") {
    const changes = row.status === ToolStatus.UNREVIEWED ? { status: ToolStatus.REVIEWED } : {};
    return editTool(prisma, { name, expectedVersion, changes, reason, acceptWithoutArgsSchema }, actor, ProposalUse.accept);
  }
  const refused = await writeTransaction(prisma, async (tx, now) => {
    // Fenced on the version and on the proposal still being there: of two admins at once, one decides.
    const { count } = await tx.toolPolicy.updateMany({
      where: { name, policyVersion: expectedVersion, proposedAt: row.proposedAt },
      data: { proposal: Prisma.DbNull, proposedBy: null, proposedAt: null },
    });
    if (count === 0) return false;
    await appendAuditLink(tx, now, {
      scope: toolScope(name),
      runId: null,
      stepId: null,
      type: "tool.proposal_refused",
      actor,
      data: { tool: name, proposal: proposal as unknown as Json, proposedBy: row.proposedBy, reason: reason ?? null },
    });
    return true;
  });
  const current = await prisma.toolPolicy.findUniqueOrThrow({ where: { name } });
  if (!refused) return { ok: false, reason: "version_changed", current: toToolRow(current, connectors), message: `Someone decided ${name}'s proposal (or its team declared again) since your page loaded; look at it again.` };
  return { ok: true, tool: toToolRow(current, connectors), changed: [] };
}
