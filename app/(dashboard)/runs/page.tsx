import type { Metadata } from "next";
import { requirePageUser } from "@/lib/server/auth/current-user";
import { requestedFilters, runsReturnTo, RunsScreen, type SearchParams } from "@/components/dashboard/runs-screen";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Runs" };

/** The runs list at its own address, for every role (support staff's landing is the correction desk). */
export default async function RunsPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const requested = requestedFilters(await searchParams);
  const { user, denied } = await requirePageUser("read", { returnTo: runsReturnTo("/runs", requested) });
  if (denied) return denied;
  return <RunsScreen requested={requested} user={user} />;
}
