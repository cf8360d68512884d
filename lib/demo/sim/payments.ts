/** A Stripe-like payment service with native idempotency keys, manual capture and lagged search. */
import { ProviderRejection } from "./errors";
import { SimSystem, type IdempotencyOpts, type SimOptions } from "./system";

/** Where an intent stands; only "succeeded" money is on the customer's statement. */
export type PaymentStatus = "requires_capture" | "succeeded" | "canceled";

/** A payment (Stripe's PaymentIntent), authorised-only or captured. */
export interface PaymentIntent {
  /** `pi_…`, the external ref a saga row records. */
  id: string;
  /** An authorisation can still be released silently; a capture can only be refunded. */
  status: PaymentStatus;
  /** Minor units, so refund arithmetic is exact. */
  amount: number;
  /** Carried so a refund or receipt can echo it. */
  currency: string;
  /** Who sees it on their statement. */
  customerId: string;
  /** Holds `saga_key`, so reconcile can find the charge after the idempotency key expired. */
  metadata: Record<string, string>;
  /** Whether the customer was told, which decides whether a correction letter is owed. */
  receipt: boolean;
  /** Running total, so a compensation can be verified by reading back. */
  amountRefunded: number;
  /** Drives search lag. */
  createdAt: Date;
}

/** A refund: a counter-action, the original charge stays on record. */
export interface Refund {
  /** `re_…`. */
  id: string;
  /** The charge it answers. */
  paymentIntentId: string;
  /** Minor units. */
  amount: number;
  /** When the money went back. */
  createdAt: Date;
}

/** A receipt the customer received: proof that the customer knows about a money movement. */
export interface Receipt {
  /** The intent the receipt is about. */
  paymentIntentId: string;
  /** A charge receipt, or a refund receipt. */
  kind: "charge" | "refund";
  /** What the receipt told the customer. */
  amount: number;
  /** Currency printed on the receipt. */
  currency: string;
  /** Who received it. */
  customerId: string;
  /** When it was sent. */
  sentAt: Date;
}

/** Request body of `authorize`. */
export interface AuthorizeParams {
  /** Whose card. */
  customerId: string;
  /** Minor units. */
  amount: number;
  /** ISO code. */
  currency: string;
  /** Put `saga_key` here so the intent is searchable by key. */
  metadata?: Record<string, string>;
}

/** Request body of `charge`. */
export interface ChargeParams extends AuthorizeParams {
  /** Send the customer a receipt (and one for each later refund). */
  receipt?: boolean;
}

/** Request body of `refund`. */
export interface RefundParams {
  /** The captured intent to refund. */
  paymentIntentId: string;
  /** Minor units; at most what is still unrefunded. */
  amount: number;
}

/** The payment provider. */
export class PaymentsSim extends SimSystem {
  private readonly intents = new Map<string, PaymentIntent>();
  private readonly refunds: Refund[] = [];
  private readonly sentReceipts: Receipt[] = [];

  constructor(opts: SimOptions = {}) {
    super("payments", opts);
  }

  /** Places a hold (manual capture): nothing on the statement until `capture`. */
  authorize(params: AuthorizeParams, opts: IdempotencyOpts = {}): Promise<PaymentIntent> {
    return this.createIntent("authorize", params, "requires_capture", opts);
  }

  /** Charges at once; the customer sees it whether or not a receipt is sent. */
  charge(params: ChargeParams, opts: IdempotencyOpts = {}): Promise<PaymentIntent> {
    return this.createIntent("charge", params, "succeeded", opts);
  }

  /** Turns a hold into a charge (the commit after the pivot). */
  capture(paymentIntentId: string, opts: IdempotencyOpts = {}): Promise<PaymentIntent> {
    return this.transition("capture", paymentIntentId, opts, (pi) => {
      pi.status = "succeeded";
    });
  }

  /** Releases a hold: the statement never shows a charge-and-refund pair. */
  cancelAuthorization(paymentIntentId: string, opts: IdempotencyOpts = {}): Promise<PaymentIntent> {
    return this.transition("cancelAuthorization", paymentIntentId, opts, (pi) => {
      pi.status = "canceled";
    });
  }

  /** Refunds part or all of a captured intent; a receipt follows when the charge had one. */
  refund(params: RefundParams, opts: IdempotencyOpts = {}): Promise<Refund> {
    const key = opts.idempotencyKey;
    return this.mutate("refund", params, { key, ref: params.paymentIntentId }, () =>
      this.idempotent(key, "refund", params, () => {
        const pi = this.intent(params.paymentIntentId);
        if (pi.status !== "succeeded") throw new ProviderRejection(409, "invalid_state", `intent is ${pi.status}`);
        if (params.amount <= 0) throw new ProviderRejection(400, "invalid_amount");
        if (pi.amountRefunded + params.amount > pi.amount) throw new ProviderRejection(400, "amount_too_large");
        pi.amountRefunded += params.amount;
        const refund: Refund = { id: this.nextId("re_"), ...params, createdAt: this.clock.now() };
        this.refunds.push(refund);
        return {
          value: refund,
          ref: pi.id,
          after: pi.receipt ? () => this.sendReceipt(pi, "refund", params.amount) : undefined,
        };
      }),
    );
  }

  /** Stripe-style search: by metadata field, and only what the index has caught up with. */
  searchByMetadata(field: string, value: string): Promise<PaymentIntent[]> {
    return this.read(() =>
      [...this.intents.values()].filter((pi) => pi.metadata[field] === value && this.searchable(pi.createdAt)),
    );
  }

  /** Direct retrieval is never lagged. */
  getPaymentIntent(id: string): Promise<PaymentIntent | undefined> {
    return this.read(() => this.intents.get(id));
  }

  /** Refunds of one intent, oldest first. */
  listRefunds(paymentIntentId: string): Promise<Refund[]> {
    return this.read(() => this.refunds.filter((r) => r.paymentIntentId === paymentIntentId));
  }

  /** Every receipt the customers received, oldest first. */
  get receipts(): Receipt[] {
    return structuredClone(this.sentReceipts);
  }

  private createIntent(
    op: string,
    params: ChargeParams,
    status: PaymentStatus,
    opts: IdempotencyOpts,
  ): Promise<PaymentIntent> {
    const key = opts.idempotencyKey ?? params.metadata?.["saga_key"];
    return this.mutate(op, params, { key }, () =>
      this.idempotent(opts.idempotencyKey, op, params, () => {
        const pi: PaymentIntent = {
          id: this.nextId("pi_"),
          status,
          amount: params.amount,
          currency: params.currency,
          customerId: params.customerId,
          metadata: { ...params.metadata },
          receipt: params.receipt ?? false,
          amountRefunded: 0,
          createdAt: this.clock.now(),
        };
        this.intents.set(pi.id, pi);
        const after = pi.receipt ? () => this.sendReceipt(pi, "charge", pi.amount) : undefined;
        return { value: pi, ref: pi.id, after };
      }),
    );
  }

  /** capture and cancel: only an intent still on hold can move. */
  private transition(
    op: string,
    id: string,
    opts: IdempotencyOpts,
    change: (pi: PaymentIntent) => void,
  ): Promise<PaymentIntent> {
    const key = opts.idempotencyKey;
    return this.mutate(op, { paymentIntentId: id }, { key, ref: id }, () =>
      this.idempotent(key, op, { id }, () => {
        const pi = this.intent(id);
        if (pi.status !== "requires_capture") {
          throw new ProviderRejection(409, "invalid_state", `intent is ${pi.status}`);
        }
        change(pi);
        return { value: pi, ref: id };
      }),
    );
  }

  private intent(id: string): PaymentIntent {
    const pi = this.intents.get(id);
    if (!pi) throw this.notFound("payment intent", id);
    return pi;
  }

  private sendReceipt(pi: PaymentIntent, kind: Receipt["kind"], amount: number): void {
    const receipt: Receipt = {
      paymentIntentId: pi.id,
      kind,
      amount,
      currency: pi.currency,
      customerId: pi.customerId,
      sentAt: this.clock.now(),
    };
    this.sentReceipts.push(receipt);
    this.ledger.record({
      system: this.system,
      op: "payments.receipt",
      key: pi.metadata["saga_key"],
      ref: pi.id,
      args: receipt,
      outcome: "effect",
    });
  }
}
