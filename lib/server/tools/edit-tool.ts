/**
 * An edit of a tool's row, as a service: the desk's use case (update-tool.ts), an admin's decision on
 * a proposal and the tests call it with the database and the actor; nothing here reads a session, so
 * the command line can use it too.
 */
import * as z from "zod";
import { Prisma, type PrismaClient, type ToolPolicy } from "@/generated/prisma";
import { validationError, zodIssuesToDetails } from "@/packages/client/src/protocol/errors";
import { sharedSagaStore } from "@/lib/core/db/prisma-saga-store";
import { onConnection, writeTransaction } from "@/lib/core/db/transactions";
import { actorLabel, type Actor } from "@/packages/client/src/saga/store";
import { EscalationKind, EscalationStatus, ToolStatus } from "@/packages/client/src/saga/vocabulary";
import { ZToolName } from "@/lib/server/tokens/token-fields";
import { declaredArgsSchema } from "./declared-args-schema";
import { registeredCompensators } from "./find-tools";
import { toolNotFound } from "./get-tool";
import { checkToolPolicy, diffFields, fieldsOf, FIELD_LABELS, ZToolPolicyFields, type ToolPolicyField, type TToolPolicyFields } from "./tool-policy";
import { recordToolVersion, ToolChange } from "./tool-versions";
import { storedProposal, withProposal, type TToolProposal } from "./tool-proposal";
import { toToolRow, type TToolEditResult } from "./views";
import { sealExistingSteps } from "@/lib/server/privacy/seal-existing-steps";

/** An admin's edit of one row, bound to the version their page loaded. */
export const ZUpdateToolRequest = z.object({
  /** The tool. */
  name: ZToolName,
  /** The policy version the admin's page showed; someone else's edit since is answered, not overwritten. */
  expectedVersion: z.number().int().min(1),
  /** The fields to change (the others keep their values). */
  changes: ZToolPolicyFields.partial(),
  /** Why, for the history. */
  reason: z.string().trim().max(500).optional(),
  /** The admin checked the row against the connector: records when and by whom. */
  verified: z.boolean().default(false),
  /** Accepting a declared tool that has no argument schema, knowing its calls will take any JSON. */
  acceptWithoutArgsSchema: z.boolean().default(false),
});
/** An admin's edit of one row. */
export type TUpdateToolRequest = z.input<typeof ZUpdateToolRequest>;

/** What the change was, for the history: the status move if there is one, else an edit. */
function changeKind(before: TToolPolicyFields, after: TToolPolicyFields): ToolChange {
  if (before.status !== after.status) {
    if (after.status === ToolStatus.DISABLED) return ToolChange.disabled;
    return before.status === ToolStatus.UNREVIEWED ? ToolChange.reviewed : ToolChange.enabled;
  }
  return ToolChange.edited;
}

/** How `editTool` treats the team's pending proposal. */
export const ProposalUse = {
  /** Reviewing an unreviewed tool takes it (under the admin's own changes); any other edit leaves it waiting. */
  onReview: "onReview",
  /** The admin accepts it as it is (the changes are the proposal's). */
  accept: "accept",
} as const;
export type ProposalUse = (typeof ProposalUse)[keyof typeof ProposalUse];

/**
 * Edits a tool's row as `actor`: the merged row is checked against what the connectors can do
 * (`checkToolPolicy`; a refusal names each field and says what to change, and nothing is written),
 * then written with the next policy version, its ToolPolicyVersion and its audit event in one
 * transaction. Bumping the version makes approvals and plans that name the tool stale. Reviewing an
 * unreviewed tool accepts its team's proposal with the admin's changes on top (a proposal is only
 * ever applied by an admin, here); a proposal the edit makes moot is dropped, the rest keeps waiting.
 * A tool accepted from UNREVIEWED also resolves the calls held only because it was unreviewed: the
 * agent's next call is decided under the reviewed row.
 */
export async function editTool(prisma: PrismaClient, request: TUpdateToolRequest, actor: Actor, use: ProposalUse = ProposalUse.onReview): Promise<TToolEditResult> {
  const parsed = ZUpdateToolRequest.safeParse(request);
  if (!parsed.success) throw validationError(zodIssuesToDetails(parsed.error), "The tool edit");
  const { name, expectedVersion, changes, reason, verified, acceptWithoutArgsSchema } = parsed.data;

  const [row, compensators] = await onConnection(prisma, async () => [await prisma.toolPolicy.findUnique({ where: { name } }), await registeredCompensators(prisma)] as const);
  if (!row) throw toolNotFound(name);
  const versionChanged = (current: ToolPolicy): TToolEditResult => ({
    ok: false,
    reason: "version_changed",
    current: toToolRow(current, { lookupAvailable: current.lookupAvailable, compensators }),
    message: `${name} was changed by ${current.updatedBy ?? "someone"} since your page loaded (now version ${current.policyVersion}); review their change, then edit again.`,
  });
  if (row.policyVersion !== expectedVersion) return versionChanged(row);

  const before = fieldsOf(row);
  const proposal = storedProposal(row.proposal);
  const takesProposal = proposal !== null && (use === ProposalUse.accept || (before.status === ToolStatus.UNREVIEWED && changes.status === ToolStatus.REVIEWED));
  const after: TToolPolicyFields = { ...(takesProposal ? withProposal(before, proposal) : before), ...changes };
  // A compensation template is written for one compensator: another compensator (or none) drops it
  // unless the same change gives a new one.
  if (after.compensator !== before.compensator && !("compensationArgs" in { ...(takesProposal ? proposal : {}), ...changes })) after.compensationArgs = null;
  const lookupAvailable = takesProposal && proposal.lookupAvailable !== undefined ? proposal.lookupAvailable : row.lookupAvailable;
  const connectors = { lookupAvailable, compensators };
  const check = checkToolPolicy(name, after, before, connectors);
  if (check.issues.length > 0) {
    throw validationError(
      check.issues.map((i) => ({ path: `changes.${i.path}`, message: i.message })),
      takesProposal ? `Accepting the proposal for ${name} (${check.issues.map((i) => i.message).join(" ")} Refuse it, or edit the row instead)` : `The edit of ${name}`,
    );
  }
  const changed = Object.keys(diffFields(before, after)) as ToolPolicyField[];
  const remaining = takesProposal ? null : stillProposed(proposal, after, lookupAvailable);
  const proposalMoved = (proposal === null) !== (remaining === null) || (proposal !== null && remaining !== null && Object.keys(proposal).length !== Object.keys(remaining).length);
  if (changed.length === 0 && !verified && !proposalMoved && lookupAvailable === row.lookupAvailable) return { ok: true, tool: toToolRow(row, connectors), changed: [] };

  const by = actorLabel(actor);
  const change = changeKind(before, after);
  // A declared tool without an argument schema would take any JSON: its calls stay held unless the
  // admin accepts that knowingly.
  const schemaless = change === ToolChange.reviewed && row.declared !== null && declaredArgsSchema(row.declared) === null;
  if (schemaless && !acceptWithoutArgsSchema) {
    throw validationError(
      [{ path: "acceptWithoutArgsSchema", message: `${name} was declared without an argument schema, so its calls would take any JSON (even a bare string). Ask its team to declare one (argsSchema in the manifest), or accept it knowingly (acceptWithoutArgsSchema: true).` }],
      `Accepting ${name}`,
    );
  }
  const acceptedFrom = takesProposal ? `accepted the proposal of ${row.proposedBy ?? "its team"}` : null;
  const historyReason = [reason, acceptedFrom, schemaless ? "accepted without an argument schema: its calls take any JSON" : null].filter(Boolean).join("; ") || null;
  const updated = await writeTransaction(prisma, async (tx, now) => {
    // Fenced on the version the admin loaded: of two admins saving at once, the second changes nothing.
    const { count } = await tx.toolPolicy.updateMany({
      where: { name, policyVersion: expectedVersion },
      data: {
        ...after,
        compensationArgs: after.compensationArgs ?? Prisma.DbNull,
        revokeRoles: after.revokeRoles,
        reviewerEditableArgs: after.reviewerEditableArgs === null ? Prisma.DbNull : after.reviewerEditableArgs,
        personalData: after.personalData ?? Prisma.DbNull,
        lookupAvailable,
        ...(remaining ? { proposal: remaining as Prisma.InputJsonValue } : { proposal: Prisma.DbNull, proposedBy: null, proposedAt: null }),
        policyVersion: { increment: 1 },
        updatedBy: by,
        updatedAt: now,
        ...(change === ToolChange.disabled ? { disabledBy: by, disabledAt: now } : {}),
        ...(change === ToolChange.enabled || change === ToolChange.reviewed ? { disabledBy: null, disabledAt: null } : {}),
        ...(verified || change === ToolChange.reviewed ? { verifiedBy: by, verifiedAt: now } : {}),
      },
    });
    if (count === 0) return null;
    const written = await tx.toolPolicy.findUniqueOrThrow({ where: { name } });
    await recordToolVersion(tx, now, written, change, actor, before, historyReason ?? (changed.length === 0 ? "verified against the connector" : null));
    return written;
  });
  if (!updated) return versionChanged(await prisma.toolPolicy.findUniqueOrThrow({ where: { name } }));
  if (change === ToolChange.reviewed) await resolveUnreviewedHolds(prisma, updated, actor);
  // Fields newly declared personal are sealed in the rows already written (lib/core/privacy/ARCHITECTURE.md).
  if (changed.includes("personalData") && updated.personalData !== null) await sealExistingSteps(prisma, name);
  return { ok: true, tool: toToolRow(updated, connectors), changed: changed.map((f) => FIELD_LABELS[f]) };
}

/** What of a proposal still differs from the row after an edit (null: nothing left to decide). */
function stillProposed(proposal: TToolProposal | null, after: TToolPolicyFields, lookupAvailable: boolean): TToolProposal | null {
  if (!proposal) return null;
  const left: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(proposal)) {
    const now = field === "lookupAvailable" ? lookupAvailable : (after as Record<string, unknown>)[field];
    if (JSON.stringify(value ?? null) !== JSON.stringify(now ?? null)) left[field] = value;
  }
  return Object.keys(left).length > 0 ? (left as TToolProposal) : null;
}

/**
 * Calls held only because the tool was unreviewed (their dedupe key says so) are resolved as
 * superseded by the review, after the review committed: each resolution is its own store write with
 * its audit event. One that fails stays open for a reviewer; nothing is lost.
 */
async function resolveUnreviewedHolds(prisma: PrismaClient, tool: ToolPolicy, actor: Actor): Promise<void> {
  const open = await onConnection(prisma, () =>
    prisma.escalation.findMany({
      where: {
        kind: EscalationKind.APPROVAL_REQUIRED,
        status: { in: [EscalationStatus.OPEN, EscalationStatus.CLAIMED] },
        AND: [{ dedupeKey: { contains: `:${tool.name}:` } }, { dedupeKey: { contains: ":unreviewed-v" } }],
      },
      select: { id: true, kind: true },
    }),
  );
  const store = sharedSagaStore(prisma);
  for (const e of open) {
    const resolution = { approved: false, supersededBy: `tool review v${tool.policyVersion}`, note: `${tool.name} was reviewed by ${actor.id}; the agent's next call is decided under the reviewed policy.` };
    await store.resolveEscalation(e.id, { resolvedBy: actor.id, resolution }, { type: "escalation.resolved", actor, data: { escalationId: e.id, kind: e.kind, resolution } });
  }
}
