import type { Metadata } from "next";
import { WebhooksAdmin } from "@/components/admin/webhooks-admin";
import { requirePageUser } from "@/lib/server/auth/current-user";
import { getPrisma } from "@/lib/core/db/prisma";
import { findNotificationSettings } from "@/lib/server/notifications/find-webhooks";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Notifications" };

export default async function WebhooksPage() {
  const { denied } = await requirePageUser("tokens.manage", { returnTo: "/admin/webhooks" });
  if (denied) return denied;
  return <WebhooksAdmin initial={await findNotificationSettings(await getPrisma())} />;
}
