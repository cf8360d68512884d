/**
 * Which arguments of a plan item a reviewer may change before approving. The tool table's
 * `reviewerEditableArgs` names them; when it names none, a reviewer may change anything but who or
 * what the call acts on (a recipient or a target): changing those is a different call, which the
 * agent must propose itself. (Raising an amount is refused separately, in packages/client/src/saga/edit-pivot-plan.ts.)
 */

/** Argument names that say who or what a call acts on: never editable unless the tool table says so. */
const RECIPIENT_OR_TARGET = /^(to|cc|bcc|recipients?|email|address|target|[a-z]*(Id|Ids|Ref))$/;

/** Whether the tool table's default forbids a reviewer to change `arg`. */
export function isRecipientOrTarget(arg: string): boolean {
  return RECIPIENT_OR_TARGET.test(arg);
}

/** The names stored in a row's `reviewerEditableArgs`; null when it names none (the default applies). */
export function storedEditableArgs(value: unknown): string[] | null {
  if (!Array.isArray(value)) return null;
  return value.filter((a): a is string => typeof a === "string" && a.trim().length > 0);
}

/** Whether a reviewer may change `arg` under `editable` (the row's list, or null for the default). */
export function mayEditArg(arg: string, editable: readonly string[] | null): boolean {
  return editable ? editable.includes(arg) : !isRecipientOrTarget(arg);
}

function record(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** The top-level arguments an edit changes that a reviewer may not change, in the order of the arguments. */
export function lockedArgChanges(before: unknown, after: unknown, editable: readonly string[] | null): string[] {
  const [b, a] = [record(before), record(after)];
  const keys = [...new Set([...Object.keys(b), ...Object.keys(a)])];
  return keys.filter((k) => JSON.stringify(b[k]) !== JSON.stringify(a[k]) && !mayEditArg(k, editable));
}

/** The refusal, naming the argument and what to do instead. */
export function lockedArgMessage(tool: string, locked: readonly string[], editable: readonly string[] | null): string {
  const names = locked.map((a) => `\`${a}\``).join(", ");
  const rule = editable
    ? `the tool table lets a reviewer change only ${editable.length > 0 ? editable.map((a) => `\`${a}\``).join(", ") : "nothing"} of ${tool}`
    : `${locked.length === 1 ? "it names" : "they name"} who or what ${tool} acts on, which only an admin can open to reviewers in the tool table`;
  return `You may not change ${names}: ${rule}. Reject with "change an argument and propose again" so the agent proposes the call itself.`;
}
