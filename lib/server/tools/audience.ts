/**
 * Who sees a tool's effect, as the tool table states it, and what a person reads when nothing states
 * it. The table's `audienceRule` is either a fixed list ("finance, support_team") or a recipient rule
 * ("customer if to is outside the company's domains, else internal"): the named argument's address is
 * compared with the company's domains (the SAGABOARD_COMPANY_DOMAINS setting). An audience nobody can
 * know counts as customer-facing everywhere: "nobody told us" must never read as "nobody saw it".
 */
import { audienceRank } from "@/packages/client/src/saga/vocabulary";

/** The word shown (and counted as customer-facing) for an effect whose audience nothing states. */
export const UNKNOWN_AUDIENCE = "unknown";

/** A parsed audience rule. */
export type AudienceRule =
  /** The same audience for every call. */
  | { kind: "fixed"; audience: string[] }
  /** `outside` when the address in argument `arg` is outside the company's domains, else `inside`. */
  | { kind: "recipient"; arg: string; outside: string[]; inside: string[] }
  /** `whenTrue` when the call's argument `arg` is true, `whenFalse` when it is false (absent: unknown). */
  | { kind: "flag"; arg: string; whenTrue: string[]; whenFalse: string[] };

/** Where an effect's audience came from. */
export const AudienceSource = {
  /** The agent or the connector's code stated it when the call was recorded. */
  recorded: "recorded",
  /** The tool table's rule, applied to the call's arguments. */
  tool_table: "tool_table",
  /** Nothing states it: read and counted as customer-facing. */
  unknown: "unknown",
} as const;
export type AudienceSource = (typeof AudienceSource)[keyof typeof AudienceSource];

/** An effect's audience as people read it. */
export interface ResolvedAudience {
  /** Who sees it; `["unknown"]` when nothing states it. */
  audience: string[];
  /** Where that came from. */
  source: AudienceSource;
  /** Blast radius: 0 internal, 1 partner, 2 customer (unknown counts as 2). */
  rank: 0 | 1 | 2;
  /** One line for a person: who sees it and why we think so. */
  words: string;
}

const RECIPIENT_RULE = /^\s*([a-z_][a-z_, ]*?)\s+if\s+`?([A-Za-z_][\w.]*)`?\s+is\s+outside\s+(?:the\s+)?company'?s?\s+domains?\s*(?:,\s*else\s+([a-z_][a-z_, ]*))?\s*$/i;

/** "customer if receipt, else finance": one audience when a yes/no argument is true, another when it is false. */
const FLAG_RULE = /^\s*([a-z_][a-z_, ]*?)\s+if\s+`?([A-Za-z_][\w.]*)`?\s*,\s*else\s+([a-z_][a-z_, ]*)\s*$/i;

function list(text: string | undefined): string[] {
  return (text ?? "")
    .split(",")
    .map((a) => a.trim().toLowerCase())
    .filter(Boolean);
}

/** The company's own email domains (SAGABOARD_COMPANY_DOMAINS, comma-separated); empty: every address is outside. */
export function companyDomains(env: NodeJS.ProcessEnv = process.env): string[] {
  return list(env.SAGABOARD_COMPANY_DOMAINS).map((d) => d.replace(/^@/, ""));
}

/** Parses a tool table audience rule; null when the row states none. */
export function parseAudienceRule(rule: string | null | undefined): AudienceRule | null {
  if (!rule || !rule.trim()) return null;
  const m = RECIPIENT_RULE.exec(rule);
  if (m) return { kind: "recipient", arg: m[2] ?? "to", outside: list(m[1]), inside: m[3] ? list(m[3]) : ["internal"] };
  const flag = FLAG_RULE.exec(rule);
  if (flag) return { kind: "flag", arg: flag[2] ?? "", whenTrue: list(flag[1]), whenFalse: list(flag[3]) };
  const audience = list(rule);
  return audience.length > 0 ? { kind: "fixed", audience } : null;
}

/** The rule in words, for the tool table and its edit form. */
export function describeAudienceRule(rule: string | null | undefined, domains: readonly string[] = companyDomains()): string {
  const parsed = parseAudienceRule(rule);
  if (!parsed) return "not stated: every effect counts as customer-facing until an admin states who sees it";
  if (parsed.kind === "fixed") return parsed.audience.join(", ");
  if (parsed.kind === "flag") return `${parsed.whenTrue.join(", ")} when the \`${parsed.arg}\` argument is true, ${parsed.whenFalse.join(", ")} when it is false (not stated when the call leaves it out)`;
  const company = domains.length > 0 ? domains.join(", ") : "none set, so every address counts as outside";
  return `${parsed.outside.join(", ")} when the \`${parsed.arg}\` argument is outside the company's domains (${company}), else ${parsed.inside.join(", ")}`;
}

function argAt(args: unknown, path: string): unknown {
  return path.split(".").reduce<unknown>((v, key) => (v && typeof v === "object" ? (v as Record<string, unknown>)[key] : undefined), args);
}

function addresses(value: unknown): string[] {
  const all = Array.isArray(value) ? value : [value];
  return all.filter((v): v is string => typeof v === "string" && v.includes("@"));
}

/** Whether `address` belongs to one of `domains` (or a subdomain of one). */
export function isCompanyAddress(address: string, domains: readonly string[]): boolean {
  const domain = address.split("@").pop()?.trim().toLowerCase() ?? "";
  return domains.some((d) => domain === d || domain.endsWith(`.${d}`));
}

/** The audience the table's rule gives these arguments; [] when the rule states none or cannot apply. */
export function audienceFromRule(rule: string | null | undefined, args: unknown, domains: readonly string[] = companyDomains()): string[] {
  const parsed = parseAudienceRule(rule);
  if (!parsed) return [];
  if (parsed.kind === "fixed") return parsed.audience;
  if (parsed.kind === "flag") {
    const value = argAt(args, parsed.arg);
    return value === true ? parsed.whenTrue : value === false ? parsed.whenFalse : [];
  }
  const recipients = addresses(argAt(args, parsed.arg));
  if (recipients.length === 0) return [];
  return recipients.every((a) => isCompanyAddress(a, domains)) ? parsed.inside : parsed.outside;
}

/**
 * An effect's audience as people read it: what was recorded, else the tool table's rule on its
 * arguments, else unknown (customer-facing).
 */
export function resolveAudience(recorded: readonly string[] | null | undefined, rule: string | null | undefined, args: unknown, domains: readonly string[] = companyDomains()): ResolvedAudience {
  const stated = (recorded ?? []).filter((a) => a.trim().length > 0);
  if (stated.length > 0) return { audience: [...stated], source: AudienceSource.recorded, rank: rankOf(stated), words: `${stated.join(", ")} (recorded with the call)` };
  const fromRule = audienceFromRule(rule, args, domains);
  if (fromRule.length > 0) return { audience: fromRule, source: AudienceSource.tool_table, rank: rankOf(fromRule), words: `${fromRule.join(", ")} (the tool table's rule)` };
  return { audience: [UNKNOWN_AUDIENCE], source: AudienceSource.unknown, rank: 2, words: "unknown: nothing states who saw it, so it counts as customer-facing" };
}

/** Blast radius of an audience; an unknown or empty audience counts as customer-facing. */
export function rankOf(audience: readonly string[]): 0 | 1 | 2 {
  if (audience.length === 0 || audience.includes(UNKNOWN_AUDIENCE)) return 2;
  return Math.min(2, Math.max(0, audienceRank(audience))) as 0 | 1 | 2;
}
