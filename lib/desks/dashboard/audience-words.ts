/** Who sees an effect, in words, shared by the server's views and the screens. */

/** Who sees a plan item's effect, in words; an unknown audience is treated as customer-facing. */
export function audienceInWords(audience: readonly string[] | null, source: "tool" | "tool_table" | "unknown"): string {
  if (source === "unknown" || audience === null || audience.length === 0 || audience.includes("unknown")) return "not known: treated as customer-facing";
  const who = audience.length > 0 ? audience.join(", ") : "nobody outside the run";
  return source === "tool_table" ? `${who} (tool table)` : who;
}
