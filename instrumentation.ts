/**
 * Runs once when a Next.js server process starts. On Node it stamps each request with its socket's
 * peer address (lib/server/auth/socket-address.ts), which the sign-in throttle counts per client, and starts
 * the background duties every app instance keeps wherever it is deployed: the sweep that raises an
 * approved run whose agent went quiet (lib/server/worker/stuck-run-duty.ts; SAGABOARD_STUCK_SWEEP_MS=0
 * turns it off in this process), and the fold that keeps the overview's hourly counts cheap to read
 * (lib/desks/overview/fold-overview-counts.ts; SAGABOARD_OVERVIEW_FOLD_MS=0 turns it off), and the
 * daily retention pass that archives settled runs past their retention
 * (lib/server/retention/retention-duty.ts; SAGABOARD_RETENTION_MS=0 turns it off). Not while
 * `next build` collects pages.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { installPeerStamp } = await import("@/lib/server/auth/socket-address");
  await installPeerStamp();
  if (process.env.NEXT_PHASE === "phase-production-build") return;
  const [{ startStuckRunDuty, stuckSweepEveryMs }, { startOverviewFoldDuty, overviewFoldEveryMs }, { startRetentionDuty, retentionEveryMs }, { getPrisma }] = await Promise.all([
    import("@/lib/server/worker/stuck-run-duty"),
    import("@/lib/desks/overview/fold-overview-counts"),
    import("@/lib/server/retention/retention-duty"),
    import("@/lib/core/db/prisma"),
  ]);
  const everyMs = stuckSweepEveryMs();
  if (everyMs !== null) startStuckRunDuty({ prisma: getPrisma, everyMs });
  const foldEveryMs = overviewFoldEveryMs();
  if (foldEveryMs !== null) startOverviewFoldDuty({ prisma: getPrisma, everyMs: foldEveryMs });
  const retentionMs = retentionEveryMs();
  if (retentionMs !== null) startRetentionDuty({ prisma: getPrisma, everyMs: retentionMs });
}
