import type { Metadata } from "next";
import { cookies } from "next/headers";
import { ApprovalConfirm } from "@/components/approvals/approval-confirm";
import { linkCookieName } from "@/lib/delivery/approval-link-pages";
import { getPrisma } from "@/lib/core/db/prisma";
import { getApprovalConfirmation } from "@/lib/desks/approvals/get-approval-confirmation";
import { requirePageUser } from "@/lib/server/auth/current-user";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Decide from your email" };

type Props = { params: Promise<{ linkId: string }> };

/** An approval email's confirm page: the whole pivot, and the forms that POST the decision. */
export default async function ApprovalConfirmPage({ params }: Props) {
  const { linkId } = await params;
  const { user, denied } = await requirePageUser("read", { returnTo: `/approvals/${encodeURIComponent(linkId)}` });
  if (denied) return denied;
  const secret = (await cookies()).get(linkCookieName(linkId))?.value ?? null;
  return <ApprovalConfirm confirmation={await getApprovalConfirmation({ actor: user, prisma: await getPrisma(), linkId, secret })} />;
}
