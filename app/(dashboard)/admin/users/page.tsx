import type { Metadata } from "next";
import { UsersAdmin } from "@/components/admin/users-admin";
import { requirePageUser } from "@/lib/server/auth/current-user";
import { getPrisma } from "@/lib/core/db/prisma";
import { toAdminUserPage } from "@/lib/server/users/admin-views";
import { findUsers } from "@/lib/server/users/find-users";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Users" };

type SearchParams = Record<string, string | string[] | undefined>;

export default async function UsersPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const raw = (await searchParams).cursor;
  const cursor = (Array.isArray(raw) ? raw[0] : raw)?.trim() || undefined;
  const { user, denied } = await requirePageUser("users.manage", { returnTo: "/admin/users" });
  if (denied) return denied;
  const initial = toAdminUserPage(await findUsers(await getPrisma(), { cursor }), user.email);
  return <UsersAdmin initial={initial} cursor={cursor} />;
}
