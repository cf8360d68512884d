import * as z from "zod";
import { Prisma, type PrismaClient, type ToolPolicy } from "@/generated/prisma";
import { validationError, zodIssuesToDetails } from "@/lib/protocol/errors";
import { userActor, type PersonRequest } from "@/lib/server/auth/current-user";
import { assertCan } from "@/lib/server/auth/roles";
import { getPrisma } from "@/lib/core/db/prisma";
import { sharedSagaStore } from "@/lib/core/db/prisma-saga-store";
import { onConnection, writeTransaction } from "@/lib/core/db/transactions";
import { actorLabel, type Actor } from "@/lib/saga/store";
import { EscalationKind, EscalationStatus, ToolStatus } from "@/lib/saga/vocabulary";
import { ZToolName } from "@/lib/server/tokens/token-fields";
import { declaredArgsSchema } from "./declared-args-schema";
import { registeredCompensators } from "./find-tools";
import { toolNotFound } from "./get-tool";
import { checkToolPolicy, diffFields, fieldsOf, FIELD_LABELS, ZToolPolicyFields, type ToolPolicyField, type TToolPolicyFields } from "./tool-policy";
import { recordToolVersion, ToolChange } from "./tool-versions";
import { toToolRow, type TToolEditResult } from "./views";

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

/** The signed-in admin edits a tool's row (see `editTool`). */
export async function updateTool({ actor, ...request }: PersonRequest<TUpdateToolRequest>): Promise<TToolEditResult> {
  assertCan(actor, "tools.edit");
  return editTool(await getPrisma(), request, userActor(actor));
}

/**
 * Edits a tool's row as `actor`: the merged row is checked against what the connectors can do
 * (`checkToolPolicy`; a refusal names each field and says what to change, and nothing is written),
 * then written with the next policy version, its ToolPolicyVersion and its audit event in one
 * transaction. Bumping the version makes approvals and plans that name the tool stale. A tool
 * accepted from UNREVIEWED also resolves the calls held only because it was unreviewed: the agent's
 * next call is decided under the reviewed row.
 */
export async function editTool(prisma: PrismaClient, request: TUpdateToolRequest, actor: Actor): Promise<TToolEditResult> {
  const parsed = ZUpdateToolRequest.safeParse(request);
  if (!parsed.success) throw validationError(zodIssuesToDetails(parsed.error), "The tool edit");
  const { name, expectedVersion, changes, reason, verified, acceptWithoutArgsSchema } = parsed.data;

  const [row, compensators] = await onConnection(prisma, async () => [await prisma.toolPolicy.findUnique({ where: { name } }), await registeredCompensators(prisma)] as const);
  if (!row) throw toolNotFound(name);
  const connectors = { lookupAvailable: row.lookupAvailable, compensators };
  const versionChanged = (current: ToolPolicy): TToolEditResult => ({
    ok: false,
    reason: "version_changed",
    current: toToolRow(current, connectors),
    message: `${name} was changed by ${current.updatedBy ?? "someone"} since your page loaded (now version ${current.policyVersion}); review their change, then edit again.`,
  });
  if (row.policyVersion !== expectedVersion) return versionChanged(row);

  const before = fieldsOf(row);
  const after: TToolPolicyFields = { ...before, ...changes };
  const check = checkToolPolicy(name, after, before, connectors);
  if (check.issues.length > 0) {
    throw validationError(
      check.issues.map((i) => ({ path: `changes.${i.path}`, message: i.message })),
      `The edit of ${name}`,
    );
  }
  const changed = Object.keys(diffFields(before, after)) as ToolPolicyField[];
  if (changed.length === 0 && !verified) return { ok: true, tool: toToolRow(row, connectors), changed: [] };

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
  const historyReason = schemaless ? [reason, "accepted without an argument schema: its calls take any JSON"].filter(Boolean).join("; ") : reason;
  const updated = await writeTransaction(prisma, async (tx, now) => {
    // Fenced on the version the admin loaded: of two admins saving at once, the second changes nothing.
    const { count } = await tx.toolPolicy.updateMany({
      where: { name, policyVersion: expectedVersion },
      data: {
        ...after,
        revokeRoles: after.revokeRoles,
        reviewerEditableArgs: after.reviewerEditableArgs === null ? Prisma.DbNull : after.reviewerEditableArgs,
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
  return { ok: true, tool: toToolRow(updated, connectors), changed: changed.map((f) => FIELD_LABELS[f]) };
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
