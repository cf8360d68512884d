/**
 * The external system of each of the support agent's tools and compensators: what the demo writes
 * into the tool table's `system` column when it registers them (scripts/db-seed.ts, scripts/demo.ts).
 * The connectors know where their effects live; the dashboard reads the column, never this map.
 */
export const SUPPORT_TOOL_SYSTEMS: Readonly<Record<string, string>> = {
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

/**
 * Who sees the effects of the support agent's tools, as the tool table states it (the rule grammar
 * is lib/server/tools/audience.ts). The table decides: an agent's own statement can widen an audience,
 * never narrow it, so a charge's receipt flag is read by the rule itself; a call that leaves the flag
 * out states nothing and counts as customer-facing.
 */
export const SUPPORT_TOOL_AUDIENCES: Readonly<Record<string, string>> = {
  create_email_draft: "agent",
  create_ticket_draft: "agent",
  create_ticket: "support_team",
  authorize_payment: "finance",
  capture_payment: "customer if receipt, else finance",
  charge_card: "customer if receipt, else finance",
  reship_order: "warehouse",
  update_crm_record: "sales",
  send_email: "customer if to is outside the company's domains, else internal",
};
