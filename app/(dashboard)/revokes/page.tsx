import type { Metadata } from "next";
import { RevokeRecords, type RevokeFilters } from "@/components/revokes/revoke-records";
import { requirePageUser } from "@/lib/server/auth/current-user";
import { findRevokes, ZFindRevokesRequest } from "@/lib/desks/revokes/find-revokes";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Revoke records" };

type SearchParams = Record<string, string | string[] | undefined>;

function param(query: SearchParams, name: string): string | undefined {
  const value = query[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first?.trim() ? first.trim() : undefined;
}

/** `2026-12-01T10:00` from a datetime-local input, read as UTC. */
function utc(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const date = new Date(/Z|[+-]\d\d:?\d\d$/.test(value) ? value : `${value}Z`);
  return Number.isNaN(date.getTime()) ? value : date.toISOString();
}

export default async function RevokesPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const query = await searchParams;
  const { user, denied } = await requirePageUser("read", { returnTo: "/revokes" });
  if (denied) return denied;
  const filters: RevokeFilters = { person: param(query, "person"), tool: param(query, "tool"), outcome: param(query, "outcome"), from: utc(param(query, "from")), to: utc(param(query, "to")) };
  const parsed = ZFindRevokesRequest.safeParse({ ...filters, cursor: param(query, "cursor") });
  const page = await findRevokes({ actor: user, ...(parsed.success ? parsed.data : {}) });
  return <RevokeRecords page={page} filters={parsed.success ? filters : {}} notice={parsed.success ? null : `The filters in the address were not understood (${parsed.error.issues.map((i) => i.path.join(".")).join(", ")}), so every revoke is shown.`} />;
}
