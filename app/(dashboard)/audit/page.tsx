import type { Metadata } from "next";
import { AuditLog, auditQuery, type AuditFilters } from "@/components/audit/audit-log";
import { requirePageUser } from "@/lib/server/auth/current-user";
import { findAuditEvents, ZFindAuditEventsRequest } from "@/lib/desks/audit/find-audit-events";
import { verifyAuditChains } from "@/lib/desks/audit/verify-audit-chains";
import { type TAuditVerification, type TAuditEventsPage } from "@/lib/desks/audit/views";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Audit log" };

type SearchParams = Record<string, string | string[] | undefined>;

const FILTER_NAMES = ["run", "scope", "actor", "type", "from", "to", "cursor"] as const;

/** The first value of a query parameter, or undefined when it is absent or empty. */
function param(searchParams: SearchParams, name: string): string | undefined {
  const value = searchParams[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first?.trim() ? first.trim() : undefined;
}

export default async function AuditPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const query = await searchParams;
  const requested: AuditFilters = Object.fromEntries(FILTER_NAMES.map((name) => [name, param(query, name)]));
  const qs = auditQuery(requested);
  const { user, denied } = await requirePageUser("read", { returnTo: qs ? `/audit?${qs}` : "/audit" });
  if (denied) return denied;

  // A filter that is not understood (a hand-edited address) is left out with a note, not an error page.
  let filters = requested;
  let notice: string | null = null;
  const parsed = ZFindAuditEventsRequest.safeParse(requested);
  if (!parsed.success) {
    const bad = new Set(parsed.error.issues.map((issue) => String(issue.path[0] ?? "")));
    notice = `Left out of the search: ${parsed.error.issues.map((i) => `${String(i.path[0] ?? "filters")} “${requested[i.path[0] as keyof AuditFilters] ?? ""}” (${i.message})`).join("; ")}.`;
    filters = Object.fromEntries(FILTER_NAMES.map((name) => [name, bad.has(name) ? undefined : requested[name]]));
  }

  let page: TAuditEventsPage | null = null;
  let error: string | null = null;
  let chain: TAuditVerification | null = null;
  try {
    page = await findAuditEvents({ actor: user, filters });
    // One chain verifies through its own index, so a run's page says at once whether it is intact.
    if (page.scope) chain = await verifyAuditChains({ actor: user, scope: page.scope });
  } catch (e) {
    console.error("[audit] reading the log failed:", e);
    error = "The database did not answer; nothing is wrong with your filters as far as we know. Try again in a moment, or check the server's log.";
  }
  return <AuditLog filters={filters} page={page} error={error} notice={notice} chain={chain} />;
}
