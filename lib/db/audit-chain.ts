/**
 * The one place that appends to an audit hash chain (runs, tokens, users): each link takes the next
 * seq of its scope and hashes the previous link with its own canonical content. Callers pass their
 * transaction, after that transaction's own write, so the state change and its event commit together.
 */
import type { Prisma } from "@/generated/prisma";
import { auditHash } from "@/lib/saga/keys";
import { actorLabel, auditHashedContent, GENESIS_HASH, type Actor } from "@/lib/saga/store";
import type { Json } from "@/lib/saga/tools";
import { auditChainLock, serializeOn } from "./dialect";

/** One event to append. */
export interface AuditLink {
  /** Chain scope (`run:<id>`, `agent-token:<id>`, `user:<id>`). */
  scope: string;
  /** The run, for run scopes. */
  runId: string | null;
  /** The step, if the event is about one. */
  stepId: string | null;
  /** Event type. */
  type: string;
  /** Who caused it. */
  actor: Actor;
  /** What changed. */
  data: Json;
}

/** Appends the next link of `link.scope`'s chain (the unique (scope, seq) index refuses a fork); returns its seq and hash. */
export async function appendAuditLink(tx: Prisma.TransactionClient, now: Date, link: AuditLink): Promise<{ seq: number; hash: string }> {
  // PostgreSQL: concurrent writers of one scope would read the same last link; serialise them.
  await serializeOn(tx, [auditChainLock(link.scope)]);
  const last = await tx.auditEvent.findFirst({ where: { scope: link.scope }, orderBy: { seq: "desc" }, select: { seq: true, hash: true } });
  const content = {
    seq: (last?.seq ?? 0) + 1,
    scope: link.scope,
    runId: link.runId,
    stepId: link.stepId,
    type: link.type,
    actor: actorLabel(link.actor),
    data: link.data,
    at: now,
  };
  const prevHash = last?.hash ?? GENESIS_HASH;
  const hash = auditHash(prevHash, auditHashedContent(content));
  await tx.auditEvent.create({ data: { ...content, data: link.data as Prisma.InputJsonValue, prevHash, hash } });
  return { seq: content.seq, hash };
}
