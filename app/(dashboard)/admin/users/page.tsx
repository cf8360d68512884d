import type { Metadata } from "next";
import { BreakGlassBanner, SsoAdmin } from "@/components/admin/sso-admin";
import { UsersAdmin } from "@/components/admin/users-admin";
import { requirePageUser } from "@/lib/server/auth/current-user";
import { getPrisma } from "@/lib/core/db/prisma";
import { toAdminUserPage } from "@/lib/server/users/admin-views";
import { findUsers } from "@/lib/server/users/find-users";
import { findSsoSettings } from "@/lib/server/sso/find-sso-settings";
import { ssoEnvironment } from "@/lib/server/sso/sso-environment";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Users" };

type SearchParams = Record<string, string | string[] | undefined>;

export default async function UsersPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const raw = (await searchParams).cursor;
  const cursor = (Array.isArray(raw) ? raw[0] : raw)?.trim() || undefined;
  const { user, denied } = await requirePageUser("users.manage", { returnTo: "/admin/users" });
  if (denied) return denied;
  const prisma = await getPrisma();
  const initial = toAdminUserPage(await findUsers(prisma, { cursor }), user.email);
  const sso = await findSsoSettings(prisma, ssoEnvironment());
  return <UsersAdmin initial={initial} cursor={cursor} ssoConfigured={sso.configured} flag={<BreakGlassBanner settings={sso} />} identity={<SsoAdmin initial={sso} />} />;
}
