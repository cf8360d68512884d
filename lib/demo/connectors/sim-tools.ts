/**
 * Tool connectors for the simulated world: the support agent's tools (the seed-003 refund-and-reship
 * run), as a real harness would register them. Each sends the step key natively where the provider
 * supports it and also as metadata/label/header/external id so reconcile can find it.
 */
import { z } from "zod";
import { ToolRejected } from "@/packages/client/src/saga/errors";
import { defineCompensator, defineTool, ToolRegistry, type Json, type ToolEffect } from "@/packages/client/src/saga/tools";
import { ToolClass } from "@/packages/client/src/saga/vocabulary";
import { ProviderError, SAGA_KEY_HEADER } from "@/lib/demo/sim";
import type { WorldLike } from "@/lib/demo/sim/remote";
import { checkedAnswer } from "./provider-answer";

/** The label (Jira) that carries a step key. */
export function sagaLabel(stepKey: string): string {
  return `saga-${stepKey}`;
}

/**
 * Maps a provider's answer to what the engine needs to know: a 4xx means nothing happened
 * (ToolRejected, retryable for 429); anything else (5xx, timeout, reset) is left as is, and the
 * engine records UNKNOWN. One 4xx is not a refusal: `idempotency_key_reused` says an earlier attempt
 * under this step's key took effect (with other arguments, e.g. a reworded retry after a reconcile
 * whose re-check was shorter than the provider's search lag). Nothing happened now, but something
 * did happen under the key: that is an unknown outcome, which the next call reconciles and finds.
 */
async function provider<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof ProviderError && e.code === "idempotency_key_reused") throw e;
    if (e instanceof ProviderError && e.status >= 400 && e.status < 500 && e.status !== 408) {
      throw new ToolRejected(e.message, e.code, e.status === 429);
    }
    throw e;
  }
}

function effect(externalRef: string, result: unknown): ToolEffect {
  return { externalRef, result: JSON.parse(JSON.stringify(result)) as Json };
}

function requireRef(ref: string | null, what: string): string {
  if (!ref) throw new ToolRejected(`the log holds no external id for this ${what}`, "no_external_ref");
  return ref;
}

// What a forward call's answer must be before it confirms a step (lib/demo/connectors/provider-answer.ts):
// the fields the step records, of their types, and the echo that says it answers this call.
const PaymentIntentAnswer = z.object({ id: z.string().startsWith("pi_"), status: z.string(), amount: z.number().int(), metadata: z.record(z.string(), z.string()) });
const TicketAnswer = z.object({ id: z.string().regex(/^SUP-\d+$/), status: z.string(), labels: z.array(z.string()) });
const EmailAnswer = (prefix: string) => z.object({ id: z.string().startsWith(prefix), headers: z.record(z.string(), z.string()) });
const ShipmentAnswer = z.object({ id: z.string().startsWith("shp_"), status: z.string(), externalId: z.string().optional() });
const CrmAnswer = z.object({ id: z.string().min(1) });
const CrmUpdateAnswer = z.object({ recordId: z.string().min(1), key: z.string() });

/** Orders the pure lookup tool knows about (the demo's shop). */
const ORDERS: Record<string, { orderId: string; customerId: string; email: string; total: number; items: string[] }> = {
  "1182": { orderId: "1182", customerId: "cus_ada", email: "ada@example.com", total: 4200, items: ["Espresso grinder"] },
  "2001": { orderId: "2001", customerId: "cus_bo", email: "bo@example.com", total: 1800, items: ["Kettle"] },
  "3107": { orderId: "3107", customerId: "cus_cy", email: "cy@example.com", total: 9900, items: ["Standing desk"] },
};

const money = z.number().int().positive();

/** Builds the registry of support-agent tools over `world`. */
export function createSupportToolRegistry(world: WorldLike): ToolRegistry {
  const { payments, ticketing, email, warehouse, crm } = world;

  const compensators = [
    defineCompensator({
      name: "delete_email_draft",
      args: z.object({}),
      run: async (_args, ctx) => {
        await provider(() => email.deleteDraft(requireRef(ctx.target.externalRef, "draft")));
        return {};
      },
      verify: async (_args, ctx) => ({ done: !(await email.getDraft(requireRef(ctx.target.externalRef, "draft"))) }),
    }),
    defineCompensator({
      name: "delete_ticket_draft",
      args: z.object({}),
      run: async (_args, ctx) => {
        await provider(() => ticketing.deleteDraft(requireRef(ctx.target.externalRef, "ticket draft")));
        return {};
      },
      verify: async (_args, ctx) => {
        const ticket = await ticketing.get(requireRef(ctx.target.externalRef, "ticket draft"));
        return { done: !ticket, remaining: ticket ? { ticketId: ticket.id, status: ticket.status } : null };
      },
    }),
    defineCompensator({
      name: "close_ticket",
      args: z.object({ reason: z.string().min(1) }),
      run: async (args, ctx) => {
        const ticket = await provider(() => ticketing.close(requireRef(ctx.target.externalRef, "ticket"), args.reason));
        return { externalRef: ticket.id };
      },
      verify: async (_args, ctx) => {
        const ticket = await ticketing.get(requireRef(ctx.target.externalRef, "ticket"));
        return { done: ticket?.status === "closed", remaining: ticket ? { ticketId: ticket.id, status: ticket.status } : null };
      },
    }),
    defineCompensator({
      name: "cancel_authorization",
      args: z.object({}),
      run: async (_args, ctx) => {
        const pi = await provider(() =>
          payments.cancelAuthorization(requireRef(ctx.target.externalRef, "authorisation"), { idempotencyKey: ctx.compensationKey }),
        );
        return { externalRef: pi.id };
      },
      verify: async (_args, ctx) => {
        const pi = await payments.getPaymentIntent(requireRef(ctx.target.externalRef, "authorisation"));
        return { done: pi?.status === "canceled", remaining: pi ? { paymentIntentId: pi.id, status: pi.status, amount: pi.amount } : null };
      },
    }),
    defineCompensator({
      name: "refund_charge",
      args: z.object({ amount: money }),
      run: async (args, ctx) => {
        const paymentIntentId = requireRef(ctx.target.externalRef, "charge");
        const refund = await provider(() => payments.refund({ paymentIntentId, amount: args.amount }, { idempotencyKey: ctx.compensationKey }));
        return { externalRef: refund.id };
      },
      verify: async (args, ctx) => {
        const pi = await payments.getPaymentIntent(requireRef(ctx.target.externalRef, "charge"));
        const refunded = pi?.amountRefunded ?? 0;
        return {
          done: refunded >= args.amount,
          remaining: pi ? { paymentIntentId: pi.id, charged: pi.amount, refunded, stillCharged: pi.amount - refunded } : null,
        };
      },
    }),
    defineCompensator({
      name: "cancel_shipment",
      args: z.object({}),
      run: async (_args, ctx) => {
        const shipment = await provider(() => warehouse.cancelShipment(requireRef(ctx.target.externalRef, "shipment")));
        return { externalRef: shipment.id };
      },
      verify: async (_args, ctx) => {
        const shipment = await warehouse.get(requireRef(ctx.target.externalRef, "shipment"));
        return { done: shipment?.status === "cancelled", remaining: shipment ? { shipmentId: shipment.id, status: shipment.status } : null };
      },
    }),
    defineCompensator({
      name: "restore_crm_snapshot",
      args: z.object({}),
      run: async (_args, ctx) => {
        const record = await provider(() => crm.restore(ctx.target.stepKey));
        return { externalRef: record.id };
      },
      verify: async (_args, ctx) => {
        const update = await crm.findUpdateByKey(ctx.target.stepKey);
        return { done: Boolean(update?.restoredAt), remaining: update ? { recordId: update.recordId, patch: update.patch as Json } : null };
      },
    }),
  ];

  const tools = [
    defineTool({
      name: "search_orders",
      class: ToolClass.PURE,
      description: "Look an order up by id.",
      args: z.object({ orderId: z.string().min(1) }),
      call: async (args) => {
        const order = ORDERS[args.orderId.replace(/\D/g, "")];
        if (!order) throw new ToolRejected(`order ${args.orderId} does not exist`, "order_not_found");
        return { externalRef: null, result: order };
      },
    }),
    defineTool({
      name: "create_email_draft",
      class: ToolClass.REVERSIBLE,
      description: "Draft an email to the customer (nobody sees it until it is sent).",
      args: z.object({ to: z.email(), subject: z.string().min(1), body: z.string().min(1) }),
      call: async (args, ctx) => {
        const answer = await provider(() => email.createDraft({ ...args, headers: { [SAGA_KEY_HEADER]: ctx.stepKey } }));
        const draft = checkedAnswer("email.createDraft", EmailAnswer("drf_"), answer, (d) => d.headers[SAGA_KEY_HEADER] === ctx.stepKey);
        return effect(draft.id, { draftId: draft.id });
      },
      lookup: async (key) => {
        const [found] = await email.searchDrafts(SAGA_KEY_HEADER, key);
        if (!found) return null;
        const draft = checkedAnswer("email.searchDrafts", EmailAnswer("drf_"), found, (d) => d.headers[SAGA_KEY_HEADER] === key);
        return effect(draft.id, { draftId: draft.id });
      },
      compensation: { with: "delete_email_draft", build: () => ({}) },
      audience: () => ["agent"],
      owner: "support-leads",
    }),
    defineTool({
      name: "create_ticket_draft",
      class: ToolClass.REVERSIBLE,
      description: "Stage a support ticket that is not in the team's queue yet.",
      args: z.object({ summary: z.string().min(1), orderId: z.string().min(1) }),
      call: async (args, ctx) => {
        const answer = await provider(() => ticketing.createDraft({ ...args, labels: [sagaLabel(ctx.stepKey)] }));
        const ticket = checkedAnswer("ticketing.createDraft", TicketAnswer, answer, (t) => t.labels.includes(sagaLabel(ctx.stepKey)));
        return effect(ticket.id, { ticketId: ticket.id, status: ticket.status });
      },
      lookup: async (key) => {
        const [found] = await ticketing.searchByLabel(sagaLabel(key));
        if (!found) return null;
        const ticket = checkedAnswer("ticketing.searchByLabel", TicketAnswer, found, (t) => t.labels.includes(sagaLabel(key)));
        return effect(ticket.id, { ticketId: ticket.id, status: ticket.status });
      },
      compensation: { with: "delete_ticket_draft", build: () => ({}) },
      audience: () => ["agent"],
      owner: "support-leads",
    }),
    defineTool({
      name: "create_ticket",
      class: ToolClass.COMPENSATABLE,
      description: "Open a ticket in the support team's queue.",
      args: z.object({ summary: z.string().min(1), orderId: z.string().min(1) }),
      call: async (args, ctx) => {
        const answer = await provider(() => ticketing.create({ ...args, labels: [sagaLabel(ctx.stepKey)] }));
        const ticket = checkedAnswer("ticketing.create", TicketAnswer, answer, (t) => t.labels.includes(sagaLabel(ctx.stepKey)));
        return effect(ticket.id, { ticketId: ticket.id, status: ticket.status });
      },
      lookup: async (key) => {
        const [found] = await ticketing.searchByLabel(sagaLabel(key));
        if (!found) return null;
        const ticket = checkedAnswer("ticketing.searchByLabel", TicketAnswer, found, (t) => t.labels.includes(sagaLabel(key)));
        return effect(ticket.id, { ticketId: ticket.id, status: ticket.status });
      },
      compensation: { with: "close_ticket", build: () => ({ reason: "rolled back by the agent run" }) },
      audience: () => ["support_team"],
      owner: "support-leads",
    }),
    defineTool({
      name: "authorize_payment",
      class: ToolClass.COMPENSATABLE,
      description: "Place an authorisation hold (manual capture): released by cancelling, never shows as a charge.",
      args: z.object({ customerId: z.string().min(1), amount: money, currency: z.string().length(3) }),
      call: async (args, ctx) => {
        const answer = await provider(() =>
          payments.authorize({ ...args, metadata: { saga_key: ctx.stepKey } }, { idempotencyKey: ctx.stepKey }),
        );
        const pi = checkedAnswer("payments.authorize", PaymentIntentAnswer, answer, (p) => p.metadata.saga_key === ctx.stepKey);
        return effect(pi.id, { paymentIntentId: pi.id, status: pi.status, amount: pi.amount });
      },
      lookup: async (key) => {
        const [found] = await payments.searchByMetadata("saga_key", key);
        if (!found) return null;
        const pi = checkedAnswer("payments.searchByMetadata", PaymentIntentAnswer, found, (p) => p.metadata.saga_key === key);
        return effect(pi.id, { paymentIntentId: pi.id, status: pi.status, amount: pi.amount });
      },
      compensation: { with: "cancel_authorization", build: () => ({}) },
      audience: () => ["finance"],
      owner: "payments-team",
    }),
    defineTool({
      name: "capture_payment",
      class: ToolClass.COMPENSATABLE,
      description: "Capture an authorised payment (the commit after the pivot).",
      args: z.object({ paymentIntentId: z.string().startsWith("pi_"), amount: money, receipt: z.boolean().default(false) }),
      call: async (args, ctx) => {
        const answer = await provider(() => payments.capture(args.paymentIntentId, { idempotencyKey: ctx.stepKey }));
        const pi = checkedAnswer("payments.capture", PaymentIntentAnswer, answer, (p) => p.id === args.paymentIntentId);
        return effect(pi.id, { paymentIntentId: pi.id, status: pi.status });
      },
      // The capture acts on a known intent, so reading it back is the lookup.
      lookup: async (_key, args) => {
        const pi = await payments.getPaymentIntent(args.paymentIntentId);
        return pi?.status === "succeeded" ? effect(pi.id, { paymentIntentId: pi.id, status: pi.status }) : null;
      },
      compensation: { with: "refund_charge", build: (args) => ({ amount: args.amount }) },
      audience: (args) => (args.receipt ? ["customer"] : ["finance"]),
      owner: "payments-team",
    }),
    defineTool({
      name: "charge_card",
      class: ToolClass.COMPENSATABLE,
      description: "Charge the customer's card now. A refund answers it; it is never undone.",
      args: z.object({
        customerId: z.string().min(1),
        amount: money,
        currency: z.string().length(3),
        reason: z.string().min(1),
        receipt: z.boolean().default(false),
        /** Final-sale charges cannot be refunded: no compensation can be built, so they need approval first. */
        finalSale: z.boolean().default(false),
      }),
      call: async (args, ctx) => {
        const answer = await provider(() =>
          payments.charge(
            { customerId: args.customerId, amount: args.amount, currency: args.currency, receipt: args.receipt, metadata: { saga_key: ctx.stepKey, reason: args.reason } },
            { idempotencyKey: ctx.stepKey },
          ),
        );
        const pi = checkedAnswer("payments.charge", PaymentIntentAnswer, answer, (p) => p.metadata.saga_key === ctx.stepKey);
        return effect(pi.id, { paymentIntentId: pi.id, status: pi.status, amount: pi.amount });
      },
      lookup: async (key) => {
        const [found] = await payments.searchByMetadata("saga_key", key);
        if (!found) return null;
        const pi = checkedAnswer("payments.searchByMetadata", PaymentIntentAnswer, found, (p) => p.metadata.saga_key === key);
        return effect(pi.id, { paymentIntentId: pi.id, status: pi.status, amount: pi.amount });
      },
      compensation: { with: "refund_charge", build: (args) => (args.finalSale ? null : { amount: args.amount }) },
      audience: (args) => (args.receipt ? ["customer"] : ["finance"]),
      correction: (args) =>
        args.receipt
          ? {
              audience: ["customer"],
              subject: "Your re-shipping fee was refunded",
              body: `We charged you ${(args.amount / 100).toFixed(2)} ${args.currency.toUpperCase()} by mistake and have refunded it.`,
            }
          : null,
      owner: "payments-team",
    }),
    defineTool({
      name: "reship_order",
      class: ToolClass.COMPENSATABLE,
      description: "Ask the warehouse to ship the order again.",
      args: z.object({ orderId: z.string().min(1), address: z.string().optional() }),
      call: async (args, ctx) => {
        const answer = await provider(() => warehouse.reship(args, { idempotencyKey: ctx.stepKey }));
        const shipment = checkedAnswer("warehouse.reship", ShipmentAnswer, answer, (x) => x.externalId === ctx.stepKey);
        return effect(shipment.id, { shipmentId: shipment.id, status: shipment.status });
      },
      lookup: async (key) => {
        const found = await warehouse.findByExternalId(key);
        if (!found) return null;
        const shipment = checkedAnswer("warehouse.findByExternalId", ShipmentAnswer, found, (x) => x.externalId === key);
        return effect(shipment.id, { shipmentId: shipment.id, status: shipment.status });
      },
      compensation: { with: "cancel_shipment", build: () => ({}) },
      audience: () => ["warehouse"],
      owner: "fulfilment",
    }),
    defineTool({
      name: "update_crm_record",
      class: ToolClass.COMPENSATABLE,
      description: "Write fields on a CRM record; the compensation restores the snapshot taken before the write.",
      args: z.object({ recordId: z.string().min(1), patch: z.record(z.string(), z.json()) }),
      call: async (args, ctx) => {
        const answer = await provider(() => crm.update(args.recordId, args.patch, { idempotencyKey: ctx.stepKey }));
        const record = checkedAnswer("crm.update", CrmAnswer, answer, (r) => r.id === args.recordId);
        return effect(record.id, { recordId: record.id });
      },
      lookup: async (key) => {
        const found = await crm.findUpdateByKey(key);
        if (!found) return null;
        const update = checkedAnswer("crm.findUpdateByKey", CrmUpdateAnswer, found, (u) => u.key === key);
        return effect(update.recordId, { recordId: update.recordId });
      },
      compensation: { with: "restore_crm_snapshot", build: () => ({}) },
      audience: () => ["sales"],
      owner: "sales-ops",
    }),
    defineTool({
      name: "send_email",
      class: ToolClass.IRREVERSIBLE,
      description: "Send an email. Nothing takes it back; only a correction can answer it.",
      args: z.object({ to: z.email(), subject: z.string().min(1), body: z.string().min(1) }),
      call: async (args, ctx) => {
        const answer = await provider(() => email.send({ ...args, headers: { [SAGA_KEY_HEADER]: ctx.stepKey } }));
        const message = checkedAnswer("email.send", EmailAnswer("msg_"), answer, (m) => m.headers[SAGA_KEY_HEADER] === ctx.stepKey);
        return effect(message.id, { messageId: message.id });
      },
      lookup: async (key) => {
        const [found] = await email.searchSent(SAGA_KEY_HEADER, key);
        if (!found) return null;
        const message = checkedAnswer("email.searchSent", EmailAnswer("msg_"), found, (m) => m.headers[SAGA_KEY_HEADER] === key);
        return effect(message.id, { messageId: message.id });
      },
      audience: () => ["customer"],
      correction: (args) => ({
        audience: ["customer"],
        subject: `Correction: ${args.subject}`,
        body: `Please disregard our earlier email "${args.subject}". A member of our team will follow up with the correct details.`,
      }),
      owner: "support-leads",
    }),
  ];

  return new ToolRegistry(tools, compensators);
}
