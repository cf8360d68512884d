import type { Metadata } from "next";
import { OverviewCharts } from "@/components/overview/overview-charts";
import { requirePageUser } from "@/lib/server/auth/current-user";
import { can } from "@/lib/server/auth/roles";
import { getOverview, ZOverviewRange } from "@/lib/desks/overview/get-overview";
import { BackLink } from "@/components/section";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Overview" };

type SearchParams = Record<string, string | string[] | undefined>;

export default async function OverviewPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const query = await searchParams;
  const raw = Array.isArray(query.range) ? query.range[0] : query.range;
  const { user, denied } = await requirePageUser("read", { returnTo: raw ? `/overview?range=${encodeURIComponent(raw)}` : "/overview" });
  if (denied) return denied;
  const parsed = ZOverviewRange.safeParse(raw ?? "7d");
  const range = parsed.success ? parsed.data : "7d";
  try {
    const overview = await getOverview({ actor: user, range });
    return (
      <OverviewCharts
        overview={overview}
        notice={parsed.success ? null : `The range “${raw}” is not one of 24h, 7d, 30d or 90d, so the last 7 days are shown.`}
        operations={can(user.role, "users.manage")}
      />
    );
  } catch (e) {
    // The person gets a sentence; the cause goes to the server log.
    console.error("overview failed", e);
    return (
      <div>
        <BackLink href="/">Runs</BackLink>
        <div className="empty" role="alert">
          <strong>The overview could not be read.</strong>
          The database did not answer in time. Reload the page in a moment; the runs list and the queues may still work.
        </div>
      </div>
    );
  }
}
