/**
 * Seeded agent scripts for the fault matrix: a run of tool calls drawn from a menu (the tool class
 * under test), each with arguments a model would reword on every retry, an optional commit phase of
 * irreversible calls behind a pivot, and an ending (complete, or unwind as a failed run does). The
 * same seed gives the same script, so a resumed process replays exactly what the dead one ran.
 */
import { Prng } from "./fault-oracle";

/** Tools of each logged class (lib/demo/connectors/sim-tools.ts). */
export const TOOLS_BY_CLASS = {
  REVERSIBLE: ["create_ticket_draft", "create_email_draft"],
  COMPENSATABLE: ["create_ticket", "charge_card", "authorize_payment", "reship_order", "update_crm_record"],
  IRREVERSIBLE: ["send_email"],
} as const;

export type LoggedClass = keyof typeof TOOLS_BY_CLASS;

/** One call of a script: the tool, and its arguments on attempt `n` (a model rewords free text). */
export interface ScriptCall {
  tool: string;
  args: (attempt: number) => unknown;
}

/** A seeded run. */
export interface AgentScript {
  seed: number;
  /** Calls before the pivot (releasable ones). */
  staging: ScriptCall[];
  /** Irreversible calls after an approved pivot (exact args: they must match the plan). */
  commit: ScriptCall[];
  /** How the run ends. */
  ending: "complete" | "unwind";
}

const ORDERS = ["1182", "2001", "3107"];
const CUSTOMERS = ["cus_ada", "cus_bo", "cus_cy"];
const EMAILS = ["ada@example.com", "bo@example.com", "cy@example.com"];
const REWORD = ["", " (retry)", " - again", ", as discussed"];

/** Arguments of `tool` for call `i` of seed `seed`, reworded on `attempt` > 0 where the args are free text. */
export function toolArgs(tool: string, seed: number, i: number, attempt: number): unknown {
  const r = new Prng(seed * 7919 + i * 104729);
  const order = r.pick(ORDERS);
  const n = r.int(0, 2);
  const say = REWORD[attempt % REWORD.length]!;
  switch (tool) {
    case "create_ticket_draft":
    case "create_ticket":
      return { summary: `Refund for order ${order}${say}`, orderId: order };
    case "create_email_draft":
      return { to: EMAILS[n], subject: `About order ${order}${say}`, body: `Hello, a note about order ${order} (${seed}/${i}).` };
    case "charge_card":
      return { customerId: CUSTOMERS[n], amount: 100 * r.int(1, 40), currency: "eur", reason: `re-shipping fee for order ${order}${say}`, receipt: r.chance(0.3) };
    case "authorize_payment":
      return { customerId: CUSTOMERS[n], amount: 100 * r.int(1, 40), currency: "eur" };
    case "reship_order":
      return { orderId: order };
    case "update_crm_record":
      return { recordId: "crm_ada", patch: { note: `order ${order} run ${seed}/${i}` } };
    case "send_email":
      // Never reworded: an irreversible call must match the approved plan item exactly.
      return { to: EMAILS[n], subject: `Your order ${order}`, body: `We have re-shipped order ${order} (${seed}/${i}).` };
    default:
      throw new Error(`no arguments for ${tool}`);
  }
}

/**
 * A seeded script over `menu` (tools of the class under test). Irreversible tools go to the commit
 * phase; when the menu has only those, one releasable draft is staged first so the pivot has
 * something staged to answer for on unwind.
 */
export function makeScript(seed: number, menu: readonly string[], opts: { unwindChance?: number; minCalls?: number; maxCalls?: number } = {}): AgentScript {
  const r = new Prng(seed);
  const releasable = menu.filter((t) => t !== "send_email");
  const irreversible = menu.filter((t) => t === "send_email");
  const staging: ScriptCall[] = [];
  const commit: ScriptCall[] = [];
  const n = r.int(opts.minCalls ?? 2, opts.maxCalls ?? 4);
  const stagingMenu = releasable.length > 0 ? releasable : ["create_email_draft"];
  const stagingCount = irreversible.length > 0 && releasable.length === 0 ? 1 : n;
  for (let i = 0; i < stagingCount; i++) {
    const tool = r.pick(stagingMenu);
    staging.push({ tool, args: (attempt) => toolArgs(tool, seed, i, attempt) });
  }
  if (irreversible.length > 0) {
    const m = releasable.length === 0 ? r.int(1, 3) : r.int(0, 1);
    for (let j = 0; j < m; j++) {
      const i = 100 + j;
      commit.push({ tool: "send_email", args: (attempt) => toolArgs("send_email", seed, i, attempt) });
    }
  }
  return { seed, staging, commit, ending: r.chance(opts.unwindChance ?? 0.5) ? "unwind" : "complete" };
}
