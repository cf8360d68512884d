/**
 * Which external system a tool (or compensator) acts on, for grouping a pivot's staged effects and
 * naming where a lookup or a revoke goes.
 *
 * The answer is data: the tool table's `system` column (ToolPolicy.system), which a connector's
 * registration or the demo's seed fills and an admin edits. Why not ToolPolicy.owner: `owner` names
 * the team that handles escalations (`payments-team`), not the system the effect lives in; two teams'
 * tools can touch one system and one team can own tools in several. A tool whose row names no system
 * is grouped under "other" until someone names it: nothing is guessed from the tool's name (a
 * `charge_card` of a CRM would have been placed in payments).
 */

/** A system named by a tool's row: free text such as "payments" or "salesforce". */
export type ExternalSystem = string;

/** The group of a tool whose row names no system. */
export const OTHER_SYSTEM = "other";

/** The external system a tool acts on, as its tool-table row names it (`recorded`); "other" when the row names none. */
export function systemOfTool(recorded: string | null | undefined): ExternalSystem {
  return recorded?.trim() || OTHER_SYSTEM;
}

/** A system in a sentence: its name, or "the system <tool> acts on" when the tool's row names none. */
export function systemInWords(system: ExternalSystem, tool: string): string {
  return system === OTHER_SYSTEM ? `the system ${tool} acts on` : system;
}
