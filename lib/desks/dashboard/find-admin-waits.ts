/**
 * What waits for an admin, for the admin's landing: declared tools nobody has reviewed (every call
 * of them is held until an admin accepts them), changes teams propose to reviewed tools, and notifications that failed every attempt (an admin
 * may replay them). Each with where to deal with it.
 */
import type { PersonRequest } from "@/lib/server/auth/current-user";
import { assertCan, can } from "@/lib/server/auth/roles";
import { getPrisma } from "@/lib/core/db/prisma";
import { onConnection } from "@/lib/core/db/transactions";
import { DeliveryStatus } from "@/lib/core/outbox/vocabulary";
import { ToolStatus } from "@/packages/client/src/saga/vocabulary";

/** One kind of thing waiting for an admin. */
export interface AdminWait {
  /** How many wait. */
  count: number;
  /** What they are, in words, for this count ("declared tools wait for your review"). */
  label: string;
  /** The page where an admin deals with them. */
  href: string;
}

/** What waits for an admin; empty for anyone who is not one. */
export async function findAdminWaits({ actor }: PersonRequest): Promise<AdminWait[]> {
  assertCan(actor, "read");
  if (!can(actor.role, "tools.edit")) return [];
  const prisma = await getPrisma();
  const [tools, proposals, deliveries] = await onConnection(prisma, async () => [
    await prisma.toolPolicy.count({ where: { status: ToolStatus.UNREVIEWED } }),
    // A reviewed tool whose team proposes a change: the row stands until an admin accepts or refuses it.
    await prisma.toolPolicy.count({ where: { status: { not: ToolStatus.UNREVIEWED }, proposedAt: { not: null } } }),
    await prisma.notificationDelivery.count({ where: { status: DeliveryStatus.FAILED } }),
  ]);
  return [
    { count: tools, label: tools === 1 ? "declared tool waits for your review: its calls are held until you accept it" : "declared tools wait for your review: their calls are held until you accept them", href: "/admin/tools?status=UNREVIEWED" },
    { count: proposals, label: proposals === 1 ? "reviewed tool has a change its team proposes: accept or refuse it (the row stands until you do)" : "reviewed tools have changes their teams propose: accept or refuse them (the rows stand until you do)", href: "/admin/tools?status=PROPOSED" },
    { count: deliveries, label: deliveries === 1 ? "notification failed every attempt: replay it or fix its target" : "notifications failed every attempt: replay them or fix their targets", href: "/admin/webhooks" },
  ];
}
