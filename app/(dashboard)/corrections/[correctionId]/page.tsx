import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { CorrectionWorkbench } from "@/components/corrections/correction-workbench";
import { requirePageUser } from "@/lib/server/auth/current-user";
import { can } from "@/lib/server/auth/roles";
import { ApiError } from "@/packages/client/src/protocol/errors";
import { getCorrection } from "@/lib/desks/corrections/get-correction";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Correction" };

export default async function CorrectionPage({ params }: { params: Promise<{ correctionId: string }> }) {
  const { correctionId } = await params;
  const { user, denied } = await requirePageUser("read", { returnTo: `/corrections/${encodeURIComponent(correctionId)}` });
  if (denied) return denied;
  try {
    const correction = await getCorrection({ actor: user, correctionId });
    return <CorrectionWorkbench initial={{ ...correction, me: user.email, canHandle: can(user.role, "correction.handle") }} />;
  } catch (e) {
    if (!(e instanceof ApiError) || e.code !== "NOT_FOUND") throw e;
    notFound();
  }
}
