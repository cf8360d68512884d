/** Words for the tool table's values, shared by the table and the tool page. */
import { formatDuration } from "@/components/saga-display";
import { FIELD_LABELS, type ToolPolicyField } from "@/lib/server/tools/tool-policy";

/** A window or retention in seconds, as people read it; "none" when unset. */
export function formatWindow(seconds: number | null): string {
  return seconds === null ? "none" : formatDuration(seconds);
}

/** What each class means, in one line. */
export const CLASS_MEANINGS: Record<string, string> = {
  PURE: "No side effect: not logged, retried freely.",
  REVERSIBLE: "An effect nobody outside the run has seen: undone by a silent delete.",
  COMPENSATABLE: "A visible effect answered by a counter-action (refund, close); the original stays on record.",
  IRREVERSIBLE: "Changes what people know: no undo, only a human-gated correction.",
};

/** What each review status means for agents' calls. */
export const STATUS_MEANINGS: Record<string, string> = {
  UNREVIEWED: "Declared by its team (or changed since its review), not yet accepted: every call is held for a person and treated as irreversible.",
  REVIEWED: "Accepted: calls follow this row.",
  DISABLED: "Every new call is refused.",
};

/** How a tool's effect is answered, in a few words. */
export function undoSummary(tool: { toolClass: string; compensator: string | null; undoMechanism: string | null }): string {
  if (tool.undoMechanism) return tool.undoMechanism;
  if (tool.toolClass === "PURE") return "Nothing to undo";
  if (tool.toolClass === "IRREVERSIBLE") return "A correction message, sent by a person";
  return tool.compensator ? `Runs ${tool.compensator}` : "No compensator named";
}

/** Whether a key (of a diff, or of a field error) names a field of the tool table. */
function isToolPolicyField(key: string): key is ToolPolicyField {
  return Object.hasOwn(FIELD_LABELS, key);
}

/**
 * A field of the tool table as the tool page heads it: the server's own label (FIELD_LABELS, the words
 * its messages and the history use), capitalised; null for a key that names no field.
 */
export function toolFieldLabel(key: string): string | null {
  if (!isToolPolicyField(key)) return null;
  const label = FIELD_LABELS[key];
  return label.charAt(0).toUpperCase() + label.slice(1);
}

/** A stored value of a tool-table field as a person reads it (a window in words, yes/no, "nobody" for no roles). */
export function storedValueInWords(field: string, value: unknown): string {
  if (value === null || value === undefined || value === "") return "—";
  if (field === "revocationWindowSec" || field === "keyRetentionSec") return typeof value === "number" ? formatWindow(value) : String(value);
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (field === "compensationArgs" && typeof value === "object" && !Array.isArray(value)) {
    const entries = Object.entries(value as Record<string, unknown>);
    return entries.length === 0 ? "—" : entries.map(([arg, template]) => `${arg} = ${String(template)}`).join("; ");
  }
  if (Array.isArray(value)) return value.length === 0 ? "nobody" : value.join(", ");
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}
