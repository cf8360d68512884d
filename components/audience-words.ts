/** An effect's audience as a person reads it: an unknown one says it counts as customer-facing. */
export function audienceWords(audience: readonly string[]): string {
  if (audience.length === 0 || audience.includes("unknown")) return "unknown: nothing states who saw it, so it counts as customer-facing";
  return audience.join(", ");
}
