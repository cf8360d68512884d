/**
 * Verifies the audit log's hash chains link by link. Every chain: streaming through the table by the
 * primary key in batches, so memory holds one batch and one small state per chain
 * (lib/desks/audit/chain-verifier.ts), never the log. One chain (by its scope): read through the
 * (scope, seq) index. Either way it reads up to the last event that existed when it started: events
 * appended meanwhile are left for the next verification.
 */
import { performance } from "node:perf_hooks";
import { z } from "zod";
import type { PersonRequest } from "@/lib/server/auth/current-user";
import { assertCan } from "@/lib/server/auth/roles";
import { withDb } from "@/lib/desks/dashboard/context";
import { databaseNow } from "@/lib/core/db/dialect";
import { ChainVerifier } from "./chain-verifier";
import type { TAuditVerification } from "./views";

/** Events read per query. */
export const VERIFY_BATCH_SIZE = 2000;

/** What to verify. */
export const ZVerifyAuditChainsRequest = z.object({
  /** Only this chain (`run:run_...`, `user:usr_...`); every chain when absent. */
  scope: z.string().trim().min(1).max(300).optional(),
});
/** What callers pass to `verifyAuditChains`. */
export type TVerifyAuditChainsRequest = z.input<typeof ZVerifyAuditChainsRequest>;


/** Verifies every chain (or the one named). Changes nothing. */
export async function verifyAuditChains({ actor, ...request }: PersonRequest<TVerifyAuditChainsRequest>): Promise<TAuditVerification> {
  assertCan(actor, "read");
  const { scope } = ZVerifyAuditChainsRequest.parse(request);
  const started = performance.now();
  const { checkedAt, upTo } = await withDb(async (prisma) => ({
    checkedAt: await databaseNow(prisma),
    // The last id by the key's end (an aggregate would read every row on SQLite).
    upTo: (await prisma.auditEvent.findFirst({ ...(scope ? { where: { scope } } : {}), orderBy: { id: "desc" }, select: { id: true } }))?.id ?? null,
  }));
  // Chains retention archived start from their archived heads (lib/server/retention/ARCHITECTURE.md).
  const archived = await withDb((prisma) => prisma.archivedChain.findMany({ ...(scope ? { where: { scope } } : {}), select: { scope: true, seq: true, hash: true } }));
  const verifier = new ChainVerifier(new Map(archived.map((a) => [a.scope, { seq: a.seq, hash: a.hash }])));
  if (scope) {
    // One chain through its (scope, seq) index, then in id order: a link whose seq was changed
    // would otherwise be read out of its place. A chain is small (a run's events), so it is held whole.
    const rows = await withDb((prisma) => prisma.auditEvent.findMany({ where: { scope, id: { lte: upTo ?? 0 } }, orderBy: { seq: "asc" } }));
    for (const row of rows.sort((a, b) => a.id - b.id)) verifier.push(row);
  } else {
    let after = 0;
    while (upTo !== null) {
      const rows = await withDb((prisma) => prisma.auditEvent.findMany({ where: { id: { gt: after, lte: upTo } }, orderBy: { id: "asc" }, take: VERIFY_BATCH_SIZE }));
      for (const row of rows) verifier.push(row);
      const last = rows.at(-1);
      if (!last || rows.length < VERIFY_BATCH_SIZE) break;
      after = last.id;
    }
  }
  const found = verifier.result();
  return {
    verified: found.brokenChains === 0,
    scope: scope ?? null,
    chains: found.chains,
    events: found.events,
    chainsByKind: found.chainsByKind,
    brokenChains: found.brokenChains,
    breaks: found.breaks,
    archivedChains: archived.length,
    upToEventId: found.lastEventId,
    checkedAt: checkedAt.toISOString(),
    seconds: Math.round(performance.now() - started) / 1000,
  };
}
