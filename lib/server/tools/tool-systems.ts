/**
 * Which external system a tool (or compensator) acts on, for grouping a pivot's staged effects and
 * naming where a lookup or a revoke goes.
 *
 * The answer is data: the tool table's `system` column (ToolPolicy.system), which a connector's
 * registration or the demo's seed fills and an admin edits. Why not ToolPolicy.owner: `owner` names
 * the team that handles escalations (`payments-team`), not the system the effect lives in; two teams'
 * tools can touch one system and one team can own tools in several. A tool whose row names no system
 * falls back to the system its name gives away, then to "other".
 */

/** A system named by a tool's row, or guessed from its name: free text such as "payments" or "salesforce". */
export type ExternalSystem = string;

/** The system of a tool no row or name places. */
export const OTHER_SYSTEM = "other";

/** Words in a tool name that give its system away, for tools whose row names none. */
const SYSTEM_HINTS: readonly [RegExp, string][] = [
  [/payment|charge|refund|capture|authori[sz]/, "payments"],
  [/ticket|issue/, "ticketing"],
  [/email|mail|message/, "email"],
  [/ship|warehouse|stock/, "warehouse"],
  [/crm|contact|account|record/, "crm"],
];

/** The external system `tool` acts on: what its tool-table row says, else what its name says, else "other". */
export function systemOfTool(tool: string, recorded?: string | null): ExternalSystem {
  const named = recorded?.trim();
  if (named) return named;
  return SYSTEM_HINTS.find(([pattern]) => pattern.test(tool))?.[1] ?? OTHER_SYSTEM;
}
