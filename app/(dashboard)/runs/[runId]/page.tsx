import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { RunTimelineLive } from "@/components/dashboard/run-timeline";
import { RevokePanel } from "@/components/revokes/revoke-panel";
import { getRevokeOptions } from "@/lib/desks/revokes/get-revoke-options";
import { requirePageUser } from "@/lib/server/auth/current-user";
import { getRunTimeline, type RunTimelineView } from "@/lib/desks/runs/get-run-timeline";
import { SagaError, SagaErrorCode } from "@/packages/client/src/saga/errors";

export const dynamic = "force-dynamic";

type Props = { params: Promise<{ runId: string }> };

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  const { runId } = await params;
  return { title: runId };
}

export default async function RunPage({ params }: Props) {
  const { runId } = await params;
  const { user, denied } = await requirePageUser("read", { returnTo: `/runs/${encodeURIComponent(runId)}` });
  if (denied) return denied;
  let timeline: RunTimelineView;
  try {
    timeline = await getRunTimeline({ actor: user, runId });
  } catch (error) {
    if (error instanceof SagaError && error.code === SagaErrorCode.RUN_NOT_FOUND) notFound();
    throw error;
  }
  return <RunTimelineLive initial={timeline} afterSteps={<RevokePanel initial={await getRevokeOptions({ actor: user, runId })} />} />;
}
