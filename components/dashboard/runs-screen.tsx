// The runs list as the server first paints it, for both addresses that show it: `/` (each role's
// landing) and `/runs`. Each page authenticates itself first (tests/api/pages-auth.test.ts).
import type { CurrentUser } from "@/lib/server/auth/current-user";
import { can } from "@/lib/server/auth/roles";
import { findAdminWaits } from "@/lib/desks/dashboard/find-admin-waits";
import { findRuns, ZFindRunsRequest } from "@/lib/desks/runs/find-runs";
import { RunsList, type RunsFilters } from "./runs-list";

/** A page's query parameters as Next hands them over. */
export type SearchParams = Record<string, string | string[] | undefined>;

/** The filters a runs address asks for, as typed (checked by `RunsScreen`). */
export type RequestedRunFilters = ReturnType<typeof requestedFilters>;

/** The first value of a query parameter, or undefined when it is absent or empty. */
function param(searchParams: SearchParams, name: string): string | undefined {
  const value = searchParams[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first?.trim() ? first.trim() : undefined;
}

/** The filters in a runs address. */
export function requestedFilters(query: SearchParams) {
  return {
    status: param(query, "status"),
    agent: param(query, "agent"),
    q: param(query, "q"),
    needsAttention: param(query, "needsAttention") === "1" ? true : undefined,
    cursor: param(query, "cursor"),
  };
}

/** Whether the address asks for anything but the plain list. */
export function isFiltered(requested: RequestedRunFilters): boolean {
  return Object.values(requested).some((v) => v !== undefined);
}

/** `path` with the same filters, for the sign-in page to come back to. */
export function runsReturnTo(path: string, requested: RequestedRunFilters): string {
  const search = new URLSearchParams(Object.entries(requested).flatMap(([k, v]) => (v === undefined ? [] : [[k, String(v === true ? "1" : v)]]))).toString();
  return search ? `${path}?${search}` : path;
}

/** The runs list with `requested`'s filters, what waits for the reader, and what they may do. */
export async function RunsScreen({ requested, user }: { requested: RequestedRunFilters; user: CurrentUser }) {
  const parsed = ZFindRunsRequest.safeParse(requested);
  // A bad filter in a hand-edited address shows everything with a note, rather than an error page.
  const filters: RunsFilters = parsed.success
    ? { status: parsed.data.status, agent: parsed.data.agent, q: parsed.data.q, needsAttention: parsed.data.needsAttention ?? false, cursor: parsed.data.cursor }
    : { needsAttention: false };
  const notice = parsed.success
    ? null
    : parsed.error.issues.some((issue) => issue.path[0] === "status")
      ? `“${requested.status}” is not a run status, so all runs are shown. Pick a status below.`
      : `The filters in the address were ignored (${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}), so all runs are shown.`;
  const [initial, adminWaits] = [await findRuns({ actor: user, ...(parsed.success ? parsed.data : {}) }), await findAdminWaits({ actor: user })];
  return <RunsList filters={filters} initial={initial} notice={notice} adminWaits={adminWaits} canDecide={can(user.role, "pivot.decide")} />;
}
