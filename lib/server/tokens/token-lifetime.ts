/**
 * How long new agent tokens live unless their creator says otherwise: a server-wide setting an admin
 * keeps (the tokens page, or `npm run token -- default-lifetime`), audited on its own chain. Null:
 * tokens do not expire unless created with a lifetime.
 */
import { Prisma, type PrismaClient } from "@/generated/prisma";
import { appendAuditLink } from "@/lib/core/db/audit-chain";
import { onConnection, writeTransaction } from "@/lib/core/db/transactions";
import { validationError, zodIssuesToDetails } from "@/packages/client/src/protocol/errors";
import type { Actor } from "@/packages/client/src/saga/store";
import { ZTokenLifetime } from "./token-fields";

/** The setting's key. */
const KEY = "agentTokens.defaultLifetimeSec";

/** A token whose expiry is this close is flagged on the tokens page (a week). */
export const EXPIRY_WARNING_SEC = 7 * 86_400;

/** The default lifetime of new tokens in seconds; null when tokens do not expire by default. */
export async function getDefaultTokenLifetime(prisma: PrismaClient): Promise<number | null> {
  const row = await onConnection(prisma, () => prisma.setting.findUnique({ where: { key: KEY } }));
  const parsed = ZTokenLifetime.nullable().safeParse(row?.value ?? null);
  return parsed.success ? parsed.data : null;
}

/** Sets the default lifetime of new tokens (null: they do not expire), with an audit event. Existing tokens keep theirs. */
export async function setDefaultTokenLifetime(prisma: PrismaClient, input: { seconds: number | null; actor: Actor }): Promise<number | null> {
  const parsed = ZTokenLifetime.nullable().safeParse(input.seconds);
  if (!parsed.success) throw validationError(zodIssuesToDetails(parsed.error, "defaultLifetimeSec"), "The default token lifetime");
  const seconds = parsed.data;
  await writeTransaction(prisma, async (tx, now) => {
    const before = await tx.setting.findUnique({ where: { key: KEY } });
    const data = { value: seconds ?? Prisma.JsonNull, updatedBy: `${input.actor.type}:${input.actor.id}`, updatedAt: now };
    await tx.setting.upsert({ where: { key: KEY }, create: { key: KEY, ...data }, update: data });
    await appendAuditLink(tx, now, { scope: `setting:${KEY}`, runId: null, stepId: null, type: "setting.changed", actor: input.actor, data: { key: KEY, from: (before?.value ?? null) as number | null, to: seconds } });
  });
  return seconds;
}
