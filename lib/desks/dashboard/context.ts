/**
 * What every dashboard use case shares: the database (one client, queued behind the saga store's
 * transactions), the engine the human decisions go through, and the signed-in user as an actor.
 */
import { serverToolRegistry } from "@/lib/demo/connectors/server-connectors";
import { getPrisma, type PrismaClient } from "@/lib/core/db/prisma";
import { sharedSagaStore } from "@/lib/core/db/prisma-saga-store";
import { onConnection } from "@/lib/core/db/transactions";
import { sagaSpans } from "@/lib/core/observability/saga-spans";
import { ReviewerEngine } from "@/packages/client/src/saga/reviewer-engine";
import type { ToolRegistry } from "@/packages/client/src/saga/tools";

/**
 * Runs `fn` on the process-wide client after every queued saga-store operation on it, so a
 * dashboard read never joins (or takes a WAL snapshot inside) a store transaction. Never call the
 * engine or the store from inside `fn`: they queue on the same connection and would wait for `fn`.
 */
export async function withDb<T>(fn: (prisma: PrismaClient) => Promise<T>): Promise<T> {
  const prisma = await getPrisma();
  return onConnection(prisma, () => fn(prisma));
}

/**
 * The tools this server holds connectors for, as chosen at boot (lib/demo/connectors/server-connectors.ts):
 * the demo's over the simulated systems with SAGABOARD_SIM on, none otherwise. The screens use it only
 * for what a definition adds to the tool table (an audience, whether a plan item's arguments can be
 * edited); every screen works without it.
 */
export function connectorRegistry(): ToolRegistry {
  return serverToolRegistry();
}

/**
 * The engine the dashboard's human decisions go through (decidePivot, decideHeldCall, settleUnknown,
 * resolveEscalation): each writes its row and audit event in one store transaction. None of them
 * calls a tool; the registry is there because the engine needs one. The unwinds and revokes it runs
 * in process make the same spans the agent API makes (lib/core/observability/saga-spans.ts).
 */
export async function dashboardEngine(): Promise<ReviewerEngine> {
  const prisma = await getPrisma();
  return new ReviewerEngine({ store: sharedSagaStore(prisma), registry: connectorRegistry(), observer: sagaSpans(prisma) });
}
