/**
 * Namespaces whose servers an admin trusts to say which of their tools only read: a new tool declared
 * there with the read-only hint (and not the destructive one) enters the table reviewed as PURE,
 * instead of held as IRREVERSIBLE until an admin reviews it. Off for every namespace unless an admin
 * turns it on (`npm run tools -- trust-read-only NS`), audited; it never changes a row that exists.
 */
import { Prisma, type PrismaClient } from "@/generated/prisma";
import { appendAuditLink } from "@/lib/core/db/audit-chain";
import { onConnection, writeTransaction } from "@/lib/core/db/transactions";
import type { Actor } from "@/packages/client/src/saga/store";
import { ZAgentTokenName } from "@/lib/server/tokens/token-fields";
import { validationError, zodIssuesToDetails } from "@/packages/client/src/protocol/errors";

/** The setting's key. */
export const TRUSTED_READ_ONLY_KEY = "tools.trustReadOnlyHints";

/** The namespaces whose read-only hints an admin trusts, and who set it. */
export interface TrustedReadOnly {
  namespaces: string[];
  updatedBy: string | null;
}

function namespacesOf(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

/** Reads the trusted namespaces (in a transaction when given one). */
export async function trustedReadOnly(db: PrismaClient | Prisma.TransactionClient): Promise<TrustedReadOnly> {
  const row = await db.setting.findUnique({ where: { key: TRUSTED_READ_ONLY_KEY } });
  return { namespaces: namespacesOf(row?.value), updatedBy: row?.updatedBy ?? null };
}

/** Turns trusting a namespace's read-only hints on or off, with an audit event. */
export async function setTrustedReadOnly(prisma: PrismaClient, input: { namespace: string; trusted: boolean; actor: Actor }): Promise<string[]> {
  const ns = ZAgentTokenName.safeParse(input.namespace);
  if (!ns.success) throw validationError(zodIssuesToDetails(ns.error, "namespace"), "The namespace");
  return writeTransaction(prisma, async (tx, now) => {
    const before = (await trustedReadOnly(tx)).namespaces;
    const after = input.trusted ? [...new Set([...before, ns.data])].sort() : before.filter((n) => n !== ns.data);
    const data = { value: after as Prisma.InputJsonValue, updatedBy: `${input.actor.type}:${input.actor.id}`, updatedAt: now };
    await tx.setting.upsert({ where: { key: TRUSTED_READ_ONLY_KEY }, create: { key: TRUSTED_READ_ONLY_KEY, ...data }, update: data });
    await appendAuditLink(tx, now, { scope: `setting:${TRUSTED_READ_ONLY_KEY}`, runId: null, stepId: null, type: "setting.changed", actor: input.actor, data: { key: TRUSTED_READ_ONLY_KEY, namespace: ns.data, trusted: input.trusted, from: before, to: after } });
    return after;
  });
}

/** Whether a declared entry's hints say it only reads (and nothing says it destroys). */
export function hintsSayReadOnly(entry: { hints?: { readOnly?: boolean; destructive?: boolean } | undefined }): boolean {
  return entry.hints?.readOnly === true && entry.hints.destructive !== true;
}

/** Reads the trusted namespaces outside a transaction. */
export function readTrustedReadOnly(prisma: PrismaClient): Promise<TrustedReadOnly> {
  return onConnection(prisma, () => trustedReadOnly(prisma));
}
