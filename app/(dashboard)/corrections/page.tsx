import type { Metadata } from "next";
import { CorrectionQueue, type CorrectionFilters } from "@/components/corrections/correction-queue";
import { requirePageUser } from "@/lib/server/auth/current-user";
import { findCorrections, ZFindCorrectionsRequest } from "@/lib/desks/corrections/find-corrections";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Corrections" };

type SearchParams = Record<string, string | string[] | undefined>;

function param(searchParams: SearchParams, name: string): string | undefined {
  const value = searchParams[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first?.trim() ? first.trim() : undefined;
}

export default async function CorrectionsPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const { user, denied } = await requirePageUser("read", { returnTo: "/corrections" });
  if (denied) return denied;
  const query = await searchParams;
  const parsed = ZFindCorrectionsRequest.safeParse({ status: param(query, "status"), audience: param(query, "audience"), runId: param(query, "run"), cursor: param(query, "cursor") });
  const request = parsed.success ? parsed.data : {};
  const initial = await findCorrections({ actor: user, ...request });
  const filters: CorrectionFilters = parsed.success ? { status: parsed.data.status, audience: parsed.data.audience, runId: parsed.data.runId, cursor: parsed.data.cursor } : { status: "open" };
  return <CorrectionQueue filters={filters} initial={initial} notice={parsed.success ? null : "The filters in the address were not understood, so the open queue is shown."} />;
}
