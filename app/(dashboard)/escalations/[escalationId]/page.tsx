import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { EscalationWorkbench } from "@/components/dashboard/escalation-workbench";
import { SlaCountdown } from "@/components/sla/sla-countdown";
import { requirePageUser } from "@/lib/server/auth/current-user";
import { getEscalation } from "@/lib/desks/escalations/get-escalation";
import type { TEscalationDetail } from "@/lib/desks/escalations/views";
import { SagaError } from "@/packages/client/src/saga/errors";

export const dynamic = "force-dynamic";

type Props = { params: Promise<{ escalationId: string }> };

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  const { escalationId } = await params;
  return { title: `Escalation ${escalationId}` };
}

export default async function EscalationPage({ params }: Props) {
  const { escalationId } = await params;
  const { user, denied } = await requirePageUser("read", { returnTo: `/escalations/${encodeURIComponent(escalationId)}` });
  if (denied) return denied;
  let detail: TEscalationDetail;
  try {
    detail = await getEscalation({ actor: user, escalationId });
  } catch (error) {
    if (error instanceof SagaError && error.code === "ESCALATION_NOT_FOUND") notFound();
    throw error;
  }
  return (
    <>
      <SlaCountdown itemId={escalationId} />
      <EscalationWorkbench initial={detail} />
    </>
  );
}
