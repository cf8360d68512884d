import { redirect } from "next/navigation";
import { requirePageUser } from "@/lib/server/auth/current-user";
import { Role } from "@/lib/server/auth/roles";
import { isFiltered, requestedFilters, runsReturnTo, RunsScreen, type SearchParams } from "@/components/dashboard/runs-screen";

export const dynamic = "force-dynamic";

/** Each role's landing: the runs list with what waits for the reader (support staff land on the correction desk). */
export default async function LandingPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const requested = requestedFilters(await searchParams);
  const { user, denied } = await requirePageUser("read", { returnTo: runsReturnTo("/", requested) });
  if (denied) return denied;
  // Each role lands on what waits for it: support staff on the correction desk (the runs list is a
  // click away, at /runs); an admin sees what waits for an admin first.
  if (user.role === Role.SUPPORT && !isFiltered(requested)) redirect("/corrections");
  return <RunsScreen requested={requested} user={user} />;
}
