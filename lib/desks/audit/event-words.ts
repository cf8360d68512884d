/**
 * Audit events in words, for people reading the log: who (a person, an agent, Sagaboard itself), what
 * happened, and the event's data as a sentence plus labelled values. Pure functions of the event, so
 * the page renders them on the server and a test can pin them; the raw event stays one click away.
 * Event types nobody has described yet still read well: "revoke.pulled" becomes "Revoke: pulled",
 * and their data become labelled values.
 */
import { APPROVAL_REASON_WORDS, REJECTION_CODE_LABELS } from "@/lib/desks/dashboard/reason-words";
import { FIELD_LABELS } from "@/lib/server/tools/tool-policy";

/** Who caused an event, in words. */
export interface ActorWords {
  /** "person", "agent", "Sagaboard", or "" when the actor has no known kind. */
  kind: string;
  /** Their email, the agent's name, the Sagaboard component. */
  name: string;
}

/** An actor label (`user:ada@example.com`) in words. */
export function actorInWords(actor: string): ActorWords {
  const colon = actor.indexOf(":");
  const kind = colon < 0 ? "" : actor.slice(0, colon);
  const name = colon < 0 ? actor : actor.slice(colon + 1);
  if (kind === "user") return { kind: "person", name };
  if (kind === "agent") return { kind: "agent", name };
  if (kind === "system") return { kind: "Sagaboard", name };
  return { kind: "", name: actor };
}

/** A chain's scope in words (`run:run_1` -> "run run_1"). */
export function scopeInWords(scope: string): string {
  const colon = scope.indexOf(":");
  if (colon < 0) return scope;
  const kind = scope.slice(0, colon);
  const id = scope.slice(colon + 1);
  const words: Record<string, string> = { run: "run", user: "account", "agent-token": "agent token", tool: "tool", webhook: "webhook", setting: "setting", "identity-provider": "identity provider", integration: "integration" };
  return `${words[kind] ?? kind} ${id}`;
}

/** What each known event type means. */
const TYPE_WORDS: Record<string, string> = {
  "run.started": "Run started",
  "run.completed": "Run completed",
  "run.unwinding": "Unwind started",
  "run.unwound": "Run unwound",
  "step.intended": "Step about to call a tool",
  "step.retry_intended": "Step about to be retried",
  "step.confirmed": "Step confirmed",
  "step.failed": "Step failed",
  "step.unknown": "Step outcome unknown",
  "step.reconciled": "Step checked in the real system",
  "step.settled": "Step outcome recorded by a person",
  "compensation.requested": "Undo requested",
  "compensation.confirmed": "Undo confirmed",
  "compensation.failed": "Undo failed",
  "pivot.requested": "Pivot requested",
  "pivot.approved": "Pivot approved",
  "pivot.rejected": "Pivot rejected",
  "pivot.revised": "Pivot revised",
  "pivot.edited": "Plan edited by a reviewer",
  "step.repaired_by_hand": "Repaired by hand",
  "run.settled": "Run finished by people",
  "escalation.raised": "Escalation raised",
  "escalation.claimed": "Escalation claimed",
  "escalation.released": "Escalation released",
  "escalation.resolved": "Escalation resolved",
  "correction.drafted": "Correction drafted",
  "task.enqueued": "Worker task queued",
  "task.claimed": "Worker task claimed",
  "task.completed": "Worker task completed",
  "task.failed": "Worker task failed",
  "task.released": "Worker task released",
  "user.created": "Account created",
  "user.role_changed": "Role changed",
  "user.disabled": "Account disabled",
  "user.enabled": "Account enabled",
  "agent_token.created": "Agent token created",
  "agent_token.revoked": "Agent token revoked",
  "webhook.created": "Webhook created",
  "webhook.disabled": "Webhook disabled",
  "webhook.enabled": "Webhook enabled",
  "webhook.deleted": "Webhook deleted",
  "agent_token.scope_extended": "Agent token given more tools",
  "tool.created": "Tool added to the table",
  "tool.declared": "Tool declared by its team",
  "tool.edited": "Tool row edited",
  "tool.reviewed": "Declared tool accepted",
  "tool.disabled": "Tool disabled",
  "tool.enabled": "Tool enabled again",
  "tool.redeclared": "Tool declared again",
  "tool.change_proposed": "Change proposed by the tool's team",
  "tool.proposal_refused": "Proposed change refused",
  "agent_token.refused": "Agent token's request refused",
  "setting.changed": "Setting changed",
  "user.groups_changed": "Identity provider groups changed",
  "user.deprovisioned": "Account deprovisioned by the identity provider",
  "user.sso_refused": "Single sign-on refused",
  "user.break_glass_set": "Made the break-glass account",
  "user.break_glass_cleared": "No longer the break-glass account",
  "sso.refused": "Single sign-on refused",
  "sso.callback_refused": "Single sign-on callback refused",
  "sso.group_roles_saved": "Group roles saved",
  "scim.refused": "SCIM request refused",
  "scim.token_created": "SCIM token created",
  "scim.token_revoked": "SCIM token revoked",
  "scim.group_created": "Group created by the identity provider",
  "scim.group_deleted": "Group deleted by the identity provider",
  "pivot.approval_recorded": "Approval recorded (two approvers)",
  "approval_link.used": "Decided from an approval email",
  "approval_link.refused": "Approval email link refused",
  "slack.request_refused": "Slack request refused",
  "slack.user_refused": "Slack user refused",
};

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** An event type in words (`step.confirmed` -> "Step confirmed"). */
export function typeInWords(type: string): string {
  const known = TYPE_WORDS[type];
  if (known) return known;
  const dot = type.indexOf(".");
  const words = (s: string) => s.replaceAll("_", " ").replaceAll("-", " ");
  return dot < 0 ? capitalise(words(type)) : `${capitalise(words(type.slice(0, dot)))}: ${words(type.slice(dot + 1))}`;
}

/** Field names people read (`stepIdx` -> "step"). */
const FIELD_WORDS: Record<string, string> = {
  stepIdx: "step",
  stepKey: "step key",
  externalRef: "external ref",
  planHash: "plan hash",
  compensationKey: "undo key",
  compensationRef: "undo ref",
  compensation: "undo",
  escalationId: "escalation",
  pivotId: "pivot",
  taskId: "task",
  recheckAfterMs: "re-check after (ms)",
  password: "has a password",
  via: "recorded through",
  onBehalfOf: "on behalf of",
  toolClass: "tool class",
  policyVersion: "policy version",
  lookupAvailable: "can look calls up",
  reasonCode: "the agent was told",
};

/**
 * A field name in words: a known one (the tool table's fields in the words the tool page uses,
 * FIELD_LABELS), else camelCase split into lower-case words.
 */
export function fieldInWords(key: string): string {
  return FIELD_WORDS[key] ?? (FIELD_LABELS as Record<string, string>)[key] ?? key.replace(/([a-z0-9])([A-Z])/g, "$1 $2").replaceAll("_", " ").toLowerCase();
}

const HASH_LIKE = /^[0-9a-f]{40,}$/;

/** Longer text is cut here (the raw event has all of it). */
export const MAX_VALUE_CHARS = 160;

/** Words for some values of known fields. */
const VALUE_WORDS: Record<string, Record<string, string>> = {
  via: { api: "the HTTP API" },
  reasonCode: REJECTION_CODE_LABELS,
  // A held call's reason (the gate's ApprovalReason); other `reason` fields are people's words and pass through.
  reason: APPROVAL_REASON_WORDS,
};

/** A change as the tool table records it: `{ from, to }`. */
function isChange(value: unknown): value is { from: unknown; to: unknown } {
  return value !== null && typeof value === "object" && !Array.isArray(value) && Object.keys(value).length === 2 && "from" in value && "to" in value;
}

/** A list, cut after the items that fit: "a, b, c and 7 more". */
function listInWords(items: readonly unknown[], depth: number, currency: string | null = null): string {
  const words = items.map((v) => valueInWords(v, depth + 1, currency));
  let text = "";
  for (let i = 0; i < words.length; i++) {
    const next = text ? `${text}, ${words[i]}` : words[i]!;
    if (next.length > MAX_VALUE_CHARS && i > 0) return `${text} and ${words.length - i} more`;
    text = next;
  }
  return cut(text);
}

/** Seconds as a person says them: "90 s", "2 hours", "1 day". */
export function secondsInWords(seconds: number): string {
  const units: [number, string][] = [[86_400, "day"], [3600, "hour"], [60, "minute"]];
  for (const [size, unit] of units) if (seconds >= size && seconds % size === 0) return `${seconds / size} ${unit}${seconds / size === 1 ? "" : "s"}`;
  return `${seconds} s`;
}

function cut(text: string): string {
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS - 1).trimEnd()}…` : text;
}

/** Codes a person meets in recorded data, said as a sentence would say them. */
const CODE_WORDS: Record<string, string> = {
  NOT_EXECUTED: "did not happen",
  COMPENSATE: "undo by its compensation",
  OUT_OF_WINDOW: "past its window: a person decides",
  handled_outside_window: "handled by a person, past the window",
  outcome_unknown: "nobody knows whether it happened",
  commit_by_worker: "a worker commits the approved plan",
};

/** An ISO time as the dashboard writes times everywhere: `2026-12-03 22:28:05 UTC`. */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * A recorded code or time as words: a known code by its phrase, another capitals status code
 * (`COMPENSATION_FAILED`) in lower case with spaces, an ISO time in UTC; anything else as it is (a
 * tool's name, `create_ticket_draft`, stays: it is a name, not a code).
 */
export function codeInWords(value: string): string {
  const known = CODE_WORDS[value];
  if (known) return known;
  if (/^[A-Z]{3,}(_[A-Z]+)+$/.test(value)) return value.replaceAll("_", " ").toLowerCase();
  if (ISO_TIME.test(value)) {
    const date = new Date(value);
    if (!Number.isNaN(date.getTime())) return `${date.toISOString().slice(0, 19).replace("T", " ")} UTC`;
  }
  return value;
}

/**
 * A JSON value as text a person reads (no braces or quotes): lists joined, objects as "field value"
 * pairs, amounts in minor units as money in their object's currency, else `currency` (the one the
 * enclosing value names: a failed refund's "still charged" in the charge's currency).
 */
export function valueInWords(value: unknown, depth = 0, currency: string | null = null): string {
  if (value === null || value === undefined) return "none";
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (typeof value === "number") return String(value);
  if (typeof value === "string") return HASH_LIKE.test(value) ? `${value.slice(0, 16)}…` : value === "" ? "(empty)" : cut(codeInWords(value));
  if (Array.isArray(value)) return value.length === 0 ? "none" : listInWords(value, depth, currency);
  if (isChange(value)) return value.from === null || value.from === undefined ? valueInWords(value.to, depth, currency) : `${valueInWords(value.from, depth, currency)} → ${valueInWords(value.to, depth, currency)}`;
  if (typeof value === "object") {
    const record = value as Record<string, unknown>;
    const own = str(record.currency) ?? currency;
    const hasAmount = Object.entries(record).some(([k, v]) => AMOUNT_KEYS.has(k) && typeof v === "number");
    const entries = Object.entries(record).filter(([k]) => !(k === "currency" && hasAmount));
    if (entries.length === 0) return "none";
    if (depth >= 2) return `${entries.length} ${entries.length === 1 ? "field" : "fields"}`;
    return cut(entries.map(([k, v]) => `${fieldInWords(k)} ${AMOUNT_KEYS.has(k) && typeof v === "number" ? moneyInWords(v, own) : valueInWords(v, depth + 1, own)}`).join("; "));
  }
  return String(value);
}

/** One labelled value of an event's data. */
export interface Fact {
  /** The field in words. */
  label: string;
  /** Its value in words. */
  value: string;
}

/** An event in words. */
export interface EventWords {
  /** What happened ("Step confirmed"). */
  title: string;
  /** The gist of its data, when its type has one ("Step #2 will call charge_card."). */
  sentence: string | null;
  /** The data's other fields as labelled values. */
  facts: Fact[];
}

type Data = Record<string, unknown>;
type Sentence = (d: Data) => { text: string; uses: string[] } | null;

const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);
const num = (v: unknown): number | null => (typeof v === "number" ? v : null);
const step = (d: Data) => (num(d.stepIdx) !== null ? `Step #${num(d.stepIdx)}` : "The step");

/** Sentences for the events people look for most; each names the data fields it tells. */
const SENTENCES: Record<string, Sentence> = {
  "run.started": (d) => (str(d.title) ? { text: `Started “${str(d.title)}”.`, uses: ["title"] } : null),
  "run.unwinding": (d) => (str(d.reason) ? { text: `Unwinding because: ${str(d.reason)}.`, uses: ["reason"] } : null),
  "step.intended": (d) =>
    str(d.tool) ? { text: `${step(d)} will call ${str(d.tool)}${str(d.phase) ? ` (${str(d.phase)!.toLowerCase()} phase)` : ""}.`, uses: ["stepIdx", "tool", "phase"] } : null,
  "step.confirmed": (d) => ({
    text: `${step(d)} happened in the real system${str(d.externalRef) ? `, which calls it ${str(d.externalRef)}` : ""}.`,
    uses: ["stepIdx", "externalRef"],
  }),
  "step.unknown": (d) => ({ text: `Nobody knows yet whether ${step(d).toLowerCase()} happened${str(d.message) ? `: ${str(d.message)}` : ""}.`, uses: ["stepIdx", "message"] }),
  "step.reconciled": (d) =>
    str(d.outcome)
      ? { text: str(d.outcome) === "CONFIRMED" ? `Found in the real system${str(d.externalRef) ? ` as ${str(d.externalRef)}` : ""}.` : "Not found in the real system: the call did not happen.", uses: ["outcome", "externalRef"] }
      : null,
  "compensation.requested": (d) => {
    const plan = d.compensation as Data | null | undefined;
    return plan && str(plan.tool) ? { text: `Undo by calling ${str(plan.tool)}.`, uses: ["compensation"] } : null;
  },
  "escalation.raised": (d) =>
    str(d.kind)
      ? str(d.reason) === "no_progress_after_pivot"
        ? { text: `A person is needed: the run was approved but its agent has not moved since ${str(d.since) ?? "the approval"}.`, uses: ["kind", "reason", "since"] }
        : { text: `A person is needed: ${str(d.kind)!.replaceAll("_", " ").toLowerCase()}.`, uses: ["kind"] }
      : null,
  "escalation.resolved": (d) => (str(d.kind) ? { text: `The ${str(d.kind)!.replaceAll("_", " ").toLowerCase()} item was settled.`, uses: ["kind"] } : null),
  "step.failed": (d) => ({ text: `${step(d)} was refused by the real system${str(d.message) ? `: ${str(d.message)}` : ""}.`, uses: ["stepIdx", "message"] }),
  "pivot.approved": () => ({ text: "A reviewer approved the plan: the agent may now make the approved calls.", uses: [] }),
  "pivot.rejected": (d) => ({ text: `A reviewer rejected the plan${str(d.reason) ? `: ${str(d.reason)}` : ""}.`, uses: ["reason"] }),
  "pivot.edited": (d) =>
    num(d.itemIdx) !== null ? { text: `A reviewer changed the arguments of planned call ${num(d.itemIdx)! + 1}${str(d.tool) ? ` (${str(d.tool)})` : ""} before deciding${str(d.note) ? `: ${str(d.note)}` : ""}; the plan hash changed.`, uses: ["itemIdx", "tool", "note"] } : null,
  "step.repaired_by_hand": (d) => ({ text: `A person answered the effect by hand${str(d.repairRef) ? ` (reference ${str(d.repairRef)})` : ""}${str(d.note) ? `: ${str(d.note)}` : ""}.`, uses: ["repairRef", "note"] }),
  "run.settled": () => ({ text: "Nothing is left for people on this run: it is unwound.", uses: ["from", "to", "why"] }),
  "compensation.confirmed": (d) => ({ text: `${step(d)} was undone, confirmed by reading the real system back.`, uses: ["stepIdx"] }),
  "compensation.failed": (d) => ({ text: `${step(d)} could not be undone${str(d.message) ? `: ${str(d.message)}` : ""}; something is still out there.`, uses: ["stepIdx", "message"] }),
  "pivot.requested": (d) =>
    num(d.items) !== null ? { text: `Asks to commit ${num(d.items)} planned call${num(d.items) === 1 ? "" : "s"}${num(d.staged) !== null ? ` after ${num(d.staged)} staged effect${num(d.staged) === 1 ? "" : "s"}` : ""}.`, uses: ["items", "staged"] } : null,
  "user.created": (d) => (str(d.email) ? { text: `${str(d.email)}${str(d.name) ? ` (${str(d.name)})` : ""} can now sign in${str(d.role) ? ` as ${str(d.role)}` : ""}.`, uses: ["email", "name", "role"] } : null),
  "user.role_changed": (d) => (str(d.email) && str(d.role) ? { text: `${str(d.email)} is now ${str(d.role)}.`, uses: ["email", "role"] } : null),
  "user.disabled": (d) => (str(d.email) ? { text: `${str(d.email)} can no longer sign in.`, uses: ["email"] } : null),
  "user.enabled": (d) => (str(d.email) ? { text: `${str(d.email)} can sign in again.`, uses: ["email"] } : null),
  "agent_token.created": (d) =>
    str(d.name) ? { text: `A token for ${str(d.role) === "worker" ? "the worker" : "agent"} ${str(d.name)}, scoped to ${Array.isArray(d.tools) ? d.tools.length : 0} tool${Array.isArray(d.tools) && d.tools.length === 1 ? "" : "s"}.`, uses: ["name", "role"] } : null,
  "agent_token.revoked": (d) => (str(d.name) ? { text: `${str(d.name)}'s token is refused from now on.`, uses: ["name"] } : null),
  "tool.created": (d) => toolSentence(d, "is in the tool table"),
  "tool.declared": (d) => toolSentence(d, "was declared"),
  "tool.edited": (d) => toolSentence(d, "was edited"),
  "tool.reviewed": (d) => toolSentence(d, "was accepted"),
  "tool.disabled": (d) => toolSentence(d, "was disabled"),
  "tool.change_proposed": (d) => (str(d.tool) ? { text: `${str(d.tool)}'s team proposed a change; the row stands until an admin accepts or refuses it.`, uses: ["tool"] } : null),
  "tool.proposal_refused": (d) => (str(d.tool) ? { text: `An admin refused the change proposed for ${str(d.tool)}${str(d.reason) ? `: ${str(d.reason)}` : ""}; the row stays as it was.`, uses: ["tool", "reason"] } : null),
  "agent_token.refused": (d) => (str(d.message) ? { text: `Refused: ${str(d.message)}`, uses: ["message", "code"] } : null),
  "setting.changed": (d) => (str(d.key) === "agentTokens.defaultLifetimeSec" ? { text: num(d.to) !== null ? `New agent tokens expire after ${secondsInWords(num(d.to)!)}.` : "New agent tokens do not expire by default.", uses: ["key", "to"] } : null),
};

function toolSentence(d: Data, what: string): { text: string; uses: string[] } | null {
  return str(d.tool) ? { text: `${str(d.tool)} ${what}${num(d.version) !== null ? `, now at version ${num(d.version)}` : ""}.`, uses: ["tool", "version"] } : null;
}

/** A field's value in words: known values, step numbers, durations in seconds, else `valueInWords`. */
function factValue(key: string, value: unknown, currency: string | null = null): string {
  if (typeof value === "string" && VALUE_WORDS[key]?.[value]) return VALUE_WORDS[key][value];
  if (key === "stepIdx" && typeof value === "number") return `#${value}`;
  if (key.endsWith("Sec") && typeof value === "number") return secondsInWords(value);
  if (key.endsWith("Sec") && isChange(value) && typeof value.to === "number") {
    return typeof value.from === "number" ? `${secondsInWords(value.from)} → ${secondsInWords(value.to)}` : secondsInWords(value.to);
  }
  return valueInWords(value, 0, currency);
}

/**
 * An amount in minor units as money: 1800 with "eur" is "€18.00"; without a currency, "18.00"
 * (every amount Sagaboard's tools carry is in minor units). One figure, never the cents beside it.
 */
export function moneyInWords(amount: number, currency?: string | null): string {
  const code = typeof currency === "string" && /^[a-z]{3}$/i.test(currency) ? currency.toUpperCase() : null;
  if (code) {
    try {
      const format = new Intl.NumberFormat("en", { style: "currency", currency: code });
      const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
      return format.format(amount / 10 ** digits);
    } catch {
      // An unknown currency code: fall through to the plain figure with the code.
    }
  }
  const figure = (amount / 100).toFixed(2);
  return code ? `${figure} ${code}` : figure;
}

/** A data field that is an amount in minor units (with `currency` beside it, when there is one). */
const AMOUNT_KEYS = new Set(["amount", "amountRefunded", "amountCaptured", "refundAmount", "charged", "refunded", "stillCharged"]);

/** Labelled values of one object's fields: amounts read as money (their currency folded in), the rest in words. */
function fieldFacts(data: Data, skip: ReadonlySet<string> = new Set(), fallbackCurrency: string | null = null): Fact[] {
  const currency = str(data.currency) ?? fallbackCurrency;
  const hasAmount = Object.entries(data).some(([k, v]) => AMOUNT_KEYS.has(k) && typeof v === "number");
  return Object.entries(data)
    .filter(([key]) => !skip.has(key) && !(key === "currency" && hasAmount))
    .flatMap(([key, value]): Fact[] => {
      if (AMOUNT_KEYS.has(key) && typeof value === "number") return [{ label: fieldInWords(key), value: moneyInWords(value, currency) }];
      // A diff of changed fields reads as one labelled value per field.
      if (key === "diff" && value !== null && typeof value === "object" && !Array.isArray(value) && Object.values(value).every(isChange)) {
        return Object.entries(value).map(([field, change]) => ({ label: fieldInWords(field), value: factValue(field, change) }));
      }
      return [{ label: fieldInWords(key), value: factValue(key, value, currency) }];
    });
}

/**
 * Any JSON value as labelled values, for people reading a tool call's arguments, an error or an
 * escalation's detail: an object gives one per field, anything else one value labelled `label`.
 * Amounts are money in their own object's currency, else `currency` (the call's, for its undo or error).
 */
export function factsOf(value: unknown, label = "value", currency: string | null = null): Fact[] {
  if (value === null || value === undefined) return [];
  if (typeof value === "object" && !Array.isArray(value)) return fieldFacts(value as Data, new Set(), currency);
  return [{ label, value: valueInWords(value, 0, currency) }];
}

/** An event's type and data in words. */
export function eventInWords(event: { type: string; data: unknown; stepIdx?: number | null }): EventWords {
  let data: Data = event.data !== null && typeof event.data === "object" && !Array.isArray(event.data) ? (event.data as Data) : { value: event.data };
  // The server's call commands record the step on the event (its stepId), not its number in the data:
  // a caller that knows the step's number passes it, so the sentence still says "Step #2".
  if (num(data.stepIdx) === null && typeof event.stepIdx === "number") data = { ...data, stepIdx: event.stepIdx };
  const said = SENTENCES[event.type]?.(data) ?? null;
  return { title: typeInWords(event.type), sentence: said?.text ?? null, facts: fieldFacts(data, new Set(said?.uses ?? [])) };
}
