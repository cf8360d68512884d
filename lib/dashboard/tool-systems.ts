/**
 * Which external system a tool (or compensator) acts on, for grouping a pivot's staged effects.
 *
 * Why a map here rather than ToolPolicy.owner: `owner` names the team that handles escalations
 * (`payments-team`, `support-leads`), not the system the effect lives in; two teams' tools can touch
 * one system and one team can own tools in several. The connectors (lib/connectors/sim-tools.ts)
 * know the system of every tool, so this map lists them; a tool that is not in it (a tool added
 * later, another agent's connectors) falls back to the first system named in its tool name, then
 * to "other". Add new connectors' tools here.
 */

/** The external systems a reviewer recognises, plus the demo shop's read-only lookup and a catch-all. */
export const ExternalSystem = {
  /** Stripe-like card payments: authorisations, captures, charges, refunds. */
  payments: "payments",
  /** Jira-like ticketing: drafts and tickets in the support team's queue. */
  ticketing: "ticketing",
  /** Email: drafts and sent messages. */
  email: "email",
  /** Warehouse: shipments. */
  warehouse: "warehouse",
  /** CRM records. */
  crm: "crm",
  /** The shop's own order lookup (PURE: never staged). */
  shop: "shop",
  /** A tool whose system is not known. */
  other: "other",
} as const;
export type ExternalSystem = (typeof ExternalSystem)[keyof typeof ExternalSystem];
export const EXTERNAL_SYSTEMS = Object.values(ExternalSystem);

/** Tools and compensators of the support agent's connectors, by the system they act on. */
const SYSTEM_BY_TOOL: Readonly<Record<string, ExternalSystem>> = {
  search_orders: "shop",
  create_email_draft: "email",
  delete_email_draft: "email",
  send_email: "email",
  create_ticket_draft: "ticketing",
  delete_ticket_draft: "ticketing",
  create_ticket: "ticketing",
  close_ticket: "ticketing",
  authorize_payment: "payments",
  cancel_authorization: "payments",
  capture_payment: "payments",
  charge_card: "payments",
  refund_charge: "payments",
  reship_order: "warehouse",
  cancel_shipment: "warehouse",
  update_crm_record: "crm",
  restore_crm_snapshot: "crm",
};

/** Words in a tool name that give its system away, for tools the map does not list. */
const SYSTEM_HINTS: readonly [RegExp, ExternalSystem][] = [
  [/payment|charge|refund|capture|authori[sz]/, "payments"],
  [/ticket|issue/, "ticketing"],
  [/email|mail|message/, "email"],
  [/ship|warehouse|stock/, "warehouse"],
  [/crm|contact|account|record/, "crm"],
];

/** The external system `tool` acts on. */
export function systemOfTool(tool: string): ExternalSystem {
  const known = SYSTEM_BY_TOOL[tool];
  if (known) return known;
  return SYSTEM_HINTS.find(([pattern]) => pattern.test(tool))?.[1] ?? "other";
}
