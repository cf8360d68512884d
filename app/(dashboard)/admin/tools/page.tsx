import type { Metadata } from "next";
import { ToolTable, type ToolTableFilter } from "@/components/admin/tool-table";
import { requirePageUser } from "@/lib/server/auth/current-user";
import { findTools } from "@/lib/server/tools/find-tools";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Tool table" };

const FILTERS: readonly ToolTableFilter[] = ["all", "UNREVIEWED", "PROPOSED", "REVIEWED", "DISABLED"];

export default async function ToolsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { status } = await searchParams;
  const { user, denied } = await requirePageUser("read", { returnTo: "/admin/tools" });
  if (denied) return denied;
  const filter = FILTERS.find((f) => f === status) ?? "all";
  return <ToolTable table={await findTools({ actor: user })} filter={filter} />;
}
