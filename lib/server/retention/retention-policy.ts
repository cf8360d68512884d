/**
 * How long settled runs stay in the hot tables (lib/server/retention/ARCHITECTURE.md): a server-wide
 * default (a Setting, audited on its own chain) and each tool's override in the tool table
 * (`retentionSec`, versioned like every field). A run keeps the longest retention of the tools it
 * called; a run whose tools have no override, when no default is set, is kept: nothing is archived
 * until an admin says how long to keep.
 */
import { Prisma, type PrismaClient } from "@/generated/prisma";
import { appendAuditLink } from "@/lib/core/db/audit-chain";
import { onConnection, writeTransaction } from "@/lib/core/db/transactions";
import { validationError, zodIssuesToDetails } from "@/packages/client/src/protocol/errors";
import type { Actor } from "@/packages/client/src/saga/store";
import { ZRetentionSec } from "@/lib/server/tools/tool-policy";

/** The setting's key. */
export const DEFAULT_RETENTION_KEY = "retention.defaultSec";

/** The retention of every tool, and the default. */
export interface RetentionPolicy {
  /** Seconds, for tools without an override; null: keep them (no default set). */
  defaultSec: number | null;
  /** Each tool's override (tools with none are absent). */
  toolSec: ReadonlyMap<string, number>;
}

/** The default retention in seconds; null when none is set (runs are kept). */
export async function getDefaultRetention(prisma: PrismaClient): Promise<number | null> {
  const row = await onConnection(prisma, () => prisma.setting.findUnique({ where: { key: DEFAULT_RETENTION_KEY } }));
  const parsed = ZRetentionSec.nullable().safeParse(row?.value ?? null);
  return parsed.success ? parsed.data : null;
}

/** Sets the default retention (null: keep runs of tools without an override), with an audit event. */
export async function setDefaultRetention(prisma: PrismaClient, input: { seconds: number | null; actor: Actor }): Promise<number | null> {
  const parsed = ZRetentionSec.nullable().safeParse(input.seconds);
  if (!parsed.success) throw validationError(zodIssuesToDetails(parsed.error, "defaultSec"), "The default retention");
  const seconds = parsed.data;
  await writeTransaction(prisma, async (tx, now) => {
    const before = await tx.setting.findUnique({ where: { key: DEFAULT_RETENTION_KEY } });
    const data = { value: seconds ?? Prisma.JsonNull, updatedBy: `${input.actor.type}:${input.actor.id}`, updatedAt: now };
    await tx.setting.upsert({ where: { key: DEFAULT_RETENTION_KEY }, create: { key: DEFAULT_RETENTION_KEY, ...data }, update: data });
    await appendAuditLink(tx, now, { scope: `setting:${DEFAULT_RETENTION_KEY}`, runId: null, stepId: null, type: "setting.changed", actor: input.actor, data: { key: DEFAULT_RETENTION_KEY, from: (before?.value ?? null) as number | null, to: seconds } });
  });
  return seconds;
}

/** The default and every tool's override. */
export async function readRetentionPolicy(prisma: PrismaClient): Promise<RetentionPolicy> {
  const defaultSec = await getDefaultRetention(prisma);
  const rows = await onConnection(prisma, () => prisma.toolPolicy.findMany({ where: { retentionSec: { not: null } }, select: { name: true, retentionSec: true } }));
  return { defaultSec, toolSec: new Map(rows.map((r) => [r.name, r.retentionSec!])) };
}

/** A run's retention: the longest of its tools' (the default for a tool without one); null: keep it. */
export function runRetentionSec(policy: RetentionPolicy, tools: Iterable<string>): number | null {
  let longest: number | null = null;
  for (const tool of tools) {
    const sec = policy.toolSec.get(tool) ?? policy.defaultSec;
    if (sec === null) return null;
    longest = longest === null ? sec : Math.max(longest, sec);
  }
  // A run that called no logged tool keeps the default.
  return longest ?? policy.defaultSec;
}
