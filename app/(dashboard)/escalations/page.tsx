import type { Metadata } from "next";
import { EscalationQueue, type QueueFilters } from "@/components/dashboard/escalation-queue";
import { requirePageUser } from "@/lib/server/auth/current-user";
import { findEscalations, ZFindEscalationsRequest } from "@/lib/desks/escalations/find-escalations";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Escalations" };

type SearchParams = Record<string, string | string[] | undefined>;

function param(searchParams: SearchParams, name: string): string | undefined {
  const value = searchParams[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first?.trim() ? first.trim() : undefined;
}

export default async function EscalationsPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const query = await searchParams;
  const requested = { view: param(query, "view"), kind: param(query, "kind"), mine: param(query, "mine") === "1", cursor: param(query, "cursor") };
  const { user, denied } = await requirePageUser("read", { returnTo: "/escalations" });
  if (denied) return denied;
  const parsed = ZFindEscalationsRequest.safeParse(requested);
  const request = parsed.success ? parsed.data : {};
  const initial = await findEscalations({ actor: user, ...request });
  const filters: QueueFilters = parsed.success
    ? { view: parsed.data.view, kind: parsed.data.kind, mine: parsed.data.mine, cursor: parsed.data.cursor }
    : { view: "open", mine: false };
  return <EscalationQueue filters={filters} initial={initial} notice={parsed.success ? null : "The filters in the address were not understood, so the open queue is shown."} />;
}
