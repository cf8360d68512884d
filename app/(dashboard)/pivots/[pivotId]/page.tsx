import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { PivotScreen } from "@/components/dashboard/pivot-screen";
import { SlaCountdown } from "@/components/sla/sla-countdown";
import { requirePageUser } from "@/lib/server/auth/current-user";
import { getPivotScreen } from "@/lib/desks/pivots/get-pivot-screen";
import type { TPivotScreen } from "@/lib/desks/pivots/views";
import { SagaError } from "@/packages/client/src/saga/errors";

export const dynamic = "force-dynamic";

type Props = { params: Promise<{ pivotId: string }> };

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  const { pivotId } = await params;
  return { title: `Pivot ${pivotId}` };
}

export default async function PivotPage({ params }: Props) {
  const { pivotId } = await params;
  const { user, denied } = await requirePageUser("read", { returnTo: `/pivots/${encodeURIComponent(pivotId)}` });
  if (denied) return denied;
  let screen: TPivotScreen;
  try {
    screen = await getPivotScreen({ actor: user, pivotId });
  } catch (error) {
    if (error instanceof SagaError && (error.code === "PIVOT_NOT_FOUND" || error.code === "RUN_NOT_FOUND")) notFound();
    throw error;
  }
  // Keyed by the plan hash: after "load the new plan" the screen starts over from the new plan.
  return (
    <>
      <SlaCountdown itemId={screen.pivot.id} />
      <PivotScreen key={screen.pivot.planHash} initial={screen} />
    </>
  );
}
