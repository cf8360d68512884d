import { redirect } from "next/navigation";
import { requirePageUser } from "@/lib/auth/current-user";
import { Role } from "@/lib/auth/roles";
import { countUnreviewedTools } from "@/lib/tools/find-tools";
import { RunsList, type RunsFilters } from "@/components/dashboard/runs-list";
import { findRuns, ZFindRunsRequestSchema } from "@/lib/runs/find-runs";

export const dynamic = "force-dynamic";

type SearchParams = Record<string, string | string[] | undefined>;

/** The first value of a query parameter, or undefined when it is absent or empty. */
function param(searchParams: SearchParams, name: string): string | undefined {
  const value = searchParams[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first?.trim() ? first.trim() : undefined;
}

export default async function RunsPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const query = await searchParams;
  const requested = {
    status: param(query, "status"),
    agent: param(query, "agent"),
    q: param(query, "q"),
    needsAttention: param(query, "needsAttention") === "1" ? true : undefined,
    cursor: param(query, "cursor"),
  };
  const returnTo = `/?${new URLSearchParams(Object.entries(requested).flatMap(([k, v]) => (v === undefined ? [] : [[k, String(v === true ? "1" : v)]]))).toString()}`;
  const { user, denied } = await requirePageUser("read", { returnTo });
  if (denied) return denied;
  // Each role lands on what waits for it: support staff on the correction desk (the runs list is a
  // click away); an admin sees declared tools waiting for review first.
  const filtered = Object.values(requested).some((v) => v !== undefined);
  if (user.role === Role.SUPPORT && !filtered) redirect("/corrections");
  const unreviewed = user.role === Role.ADMIN ? await countUnreviewedTools() : 0;

  const parsed = ZFindRunsRequestSchema.safeParse(requested);
  // A bad filter in a hand-edited address shows everything with a note, rather than an error page.
  const filters: RunsFilters = parsed.success
    ? { status: parsed.data.status, agent: parsed.data.agent, q: parsed.data.q, needsAttention: parsed.data.needsAttention ?? false, cursor: parsed.data.cursor }
    : { needsAttention: false };
  const notice = parsed.success
    ? null
    : parsed.error.issues.some((issue) => issue.path[0] === "status")
      ? `“${requested.status}” is not a run status, so all runs are shown. Pick a status below.`
      : `The filters in the address were ignored (${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}), so all runs are shown.`;
  const initial = await findRuns(parsed.success ? parsed.data : {});
  const reviewNotice = unreviewed > 0 ? `${unreviewed === 1 ? "One declared tool waits" : `${unreviewed} declared tools wait`} for your review in the tool table (/admin/tools?status=UNREVIEWED): every call of ${unreviewed === 1 ? "it" : "them"} is held until you accept ${unreviewed === 1 ? "it" : "them"}.` : null;
  return <RunsList filters={filters} initial={initial} notice={[reviewNotice, notice].filter(Boolean).join(" ") || null} />;
}
