/**
 * The one place that appends to an audit hash chain (runs, tokens, users): each link takes the next
 * seq of its scope and hashes the previous link with its own canonical content. Callers pass their
 * transaction, after that transaction's own write, so the state change and its event commit together.
 *
 * It is also where notifications start: an event people are told about (a pivot waiting, an
 * escalation, an SLA breach, a correction draft, a revoke) writes its outbox row here, in the same
 * transaction (lib/core/outbox/outbox.ts), so no caller can forget it and none waits for a delivery.
 * The saga log's hot writes (lib/core/db/step-log-sql.ts) append their links themselves and never notify.
 */
import type { Prisma } from "@/generated/prisma";
import { recordNotification } from "@/lib/core/outbox/outbox";
import { auditHash } from "@/packages/client/src/saga/keys";
import { actorLabel, auditHashedContent, GENESIS_HASH, type Actor } from "@/packages/client/src/saga/store";
import type { Json } from "@/packages/client/src/saga/tools";
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

/** The last link of a chain: what the next one hashes. */
export interface ChainHead {
  seq: number;
  hash: string;
}

/** The row of the link after `last` (none: the chain's first link), at `at`; `actor` is an actorLabel. */
export function chainLink(last: ChainHead | undefined, link: Omit<AuditLink, "actor"> & { actor: string }, at: Date) {
  const content = { seq: (last?.seq ?? 0) + 1, scope: link.scope, runId: link.runId, stepId: link.stepId, type: link.type, actor: link.actor, data: link.data, at };
  const prevHash = last?.hash ?? GENESIS_HASH;
  return { ...content, prevHash, hash: auditHash(prevHash, auditHashedContent(content)) };
}

/** Appends the next link of `link.scope`'s chain (the unique (scope, seq) index refuses a fork); returns its seq and hash. */
export async function appendAuditLink(tx: Prisma.TransactionClient, now: Date, link: AuditLink): Promise<ChainHead> {
  // PostgreSQL: concurrent writers of one scope would read the same last link; serialise them.
  await serializeOn(tx, [auditChainLock(link.scope)]);
  // A chain whose links retention moved to an archive goes on from the archived head (ArchivedChain).
  const last =
    (await tx.auditEvent.findFirst({ where: { scope: link.scope }, orderBy: { seq: "desc" }, select: { seq: true, hash: true } })) ??
    (await tx.archivedChain.findUnique({ where: { scope: link.scope }, select: { seq: true, hash: true } }));
  const row = chainLink(last ?? undefined, { ...link, actor: actorLabel(link.actor) }, now);
  await tx.auditEvent.create({ data: { ...row, data: link.data as Prisma.InputJsonValue } });
  await recordNotification(tx, now, { scope: link.scope, seq: row.seq, runId: link.runId, stepId: link.stepId, type: link.type, data: link.data });
  return { seq: row.seq, hash: row.hash };
}
