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
