/**
 * One place that writes a version of a tool's row: the ToolPolicyVersion (who, when, the diff, the
 * row after) and its audit event, in the caller's transaction, after the row's own write.
 */
import type { Prisma, ToolPolicy } from "@/generated/prisma";
import { appendAuditLink } from "@/lib/core/db/audit-chain";
import { randomIds } from "@/packages/client/src/saga/ids";
import { actorLabel, type Actor } from "@/packages/client/src/saga/store";
import type { Json } from "@/packages/client/src/saga/tools";
import { diffFields, fieldsOf, type TToolPolicyFields } from "./tool-policy";

/** What a version records about the change. */
export const ToolChange = {
  /** A connector registered with the server added the tool. */
  created: "created",
  /** A team's manifest declared it (or declared it again). */
  declared: "declared",
  /** An admin edited fields. */
  edited: "edited",
  /** An admin accepted a declared tool. */
  reviewed: "reviewed",
  /** An admin disabled it. */
  disabled: "disabled",
  /** An admin enabled it again. */
  enabled: "enabled",
} as const;
export type ToolChange = (typeof ToolChange)[keyof typeof ToolChange];

/** The audit chain of one tool's row. */
export function toolScope(name: string): string {
  return `tool:${name}`;
}

/** Writes version `row.policyVersion` of `row` (already written) and its audit event. */
export async function recordToolVersion(
  tx: Prisma.TransactionClient,
  now: Date,
  row: ToolPolicy,
  change: ToolChange,
  actor: Actor,
  before: TToolPolicyFields | null,
  reason: string | null = null,
): Promise<void> {
  const after = fieldsOf(row);
  const diff = diffFields(before, after) as Json;
  const snapshot = { ...after, lookupAvailable: row.lookupAvailable } as Json;
  await tx.toolPolicyVersion.create({
    data: {
      id: randomIds.next("tpv"),
      toolName: row.name,
      version: row.policyVersion,
      changedBy: actorLabel(actor),
      changedAt: now,
      change,
      reason,
      diff: diff as Prisma.InputJsonValue,
      snapshot: snapshot as Prisma.InputJsonValue,
    },
  });
  await appendAuditLink(tx, now, {
    scope: toolScope(row.name),
    runId: null,
    stepId: null,
    type: `tool.${change}`,
    actor,
    data: { tool: row.name, version: row.policyVersion, diff, ...(reason ? { reason } : {}) },
  });
}
