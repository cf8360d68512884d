import type { Metadata } from "next";
import { TokensAdmin } from "@/components/admin/tokens-admin";
import { requirePageUser } from "@/lib/server/auth/current-user";
import { getPrisma } from "@/lib/core/db/prisma";
import { toAdminTokenPage } from "@/lib/server/tokens/admin-views";
import { findAgentTokens } from "@/lib/server/tokens/find-agent-tokens";
import { findScopableTools } from "@/lib/server/tokens/find-scopable-tools";
import { getDefaultTokenLifetime } from "@/lib/server/tokens/token-lifetime";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Agent tokens" };

type SearchParams = Record<string, string | string[] | undefined>;

export default async function TokensPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const raw = (await searchParams).cursor;
  const cursor = (Array.isArray(raw) ? raw[0] : raw)?.trim() || undefined;
  const { denied } = await requirePageUser("tokens.manage", { returnTo: "/admin/tokens" });
  if (denied) return denied;
  const prisma = await getPrisma();
  const initial = toAdminTokenPage(await findAgentTokens(prisma, { cursor, order: "newest" }), await findScopableTools(prisma), await getDefaultTokenLifetime(prisma));
  return <TokensAdmin initial={initial} cursor={cursor} />;
}
