// Who sees an effect, as the pivot screen shows it: the blast radius of its audience rank as a badge,
// over the audience in words. The plan table and the staged effects both show it.

import type { TPlanItemView } from "@/lib/desks/pivots/views";
import { audienceInWords, RANK_LABELS } from "@/components/dashboard/labels";

/** The blast radius of an audience rank (internal, partner, customer) as a badge; "unknown" without one. */
export function RadiusBadge({ rank }: { rank: number | null }) {
  if (rank === null) return <span className="muted">unknown</span>;
  return <span className={`radius radius-${rank}`}>{RANK_LABELS[rank] ?? "?"}</span>;
}

/** Who sees an effect: its radius badge over its audience in words (saying where an audience came from). */
export function Audience({ audience, rank, source = "tool" }: { audience: string[] | null; rank: number | null; source?: TPlanItemView["audienceSource"] }) {
  return (
    <div className="cell-stack">
      <RadiusBadge rank={rank} />
      <span className="cell-label">{audienceInWords(audience, source)}</span>
    </div>
  );
}
