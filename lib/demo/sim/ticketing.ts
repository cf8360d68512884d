/** A Jira-like ticketing service: no idempotency header, so the saga key travels as a `saga-` label. */
import { ProviderRejection } from "./errors";
import { SimSystem, type SimOptions } from "./system";

/** A draft is invisible to the support queue; open and closed tickets are on record for good. */
export type TicketStatus = "draft" | "open" | "closed";

/** A support ticket. */
export interface Ticket {
  /** `SUP-<n>`, the external ref a saga row records. */
  id: string;
  /** Free text the model wrote; rephrased on retries, so never an identity. */
  summary: string;
  /** The order it concerns, when any. */
  orderId?: string;
  /** Carries `saga-<key>`, the only way to find the ticket again by key. */
  labels: string[];
  /** Where it stands. */
  status: TicketStatus;
  /** Why it was closed, because a close is a visible counter-action, not an erasure. */
  closeReason?: string;
  /** Drives search lag. */
  createdAt: Date;
}

/** Request body of `create` and `createDraft`. */
export interface TicketParams {
  /** Ticket title. */
  summary: string;
  /** The order it concerns. */
  orderId?: string;
  /** Include `saga-<key>` so reconcile can search for it. */
  labels: string[];
}

/** Options of the ticketing service. */
export interface TicketingOptions extends SimOptions {
  /** First ticket number, so ids read like a real queue ("SUP-4470"). */
  firstTicketNumber?: number;
}

/** The saga key a ticket carries, i.e. its `saga-` label without the prefix. */
export function ticketSagaKey(labels: readonly string[]): string | undefined {
  return labels.find((l) => l.startsWith("saga-"))?.slice("saga-".length);
}

/** The ticketing service. */
export class TicketingSim extends SimSystem {
  private readonly tickets = new Map<string, Ticket>();
  private nextNumber: number;

  constructor(opts: TicketingOptions = {}) {
    super("ticketing", opts);
    this.nextNumber = opts.firstTicketNumber ?? 4470;
  }

  /** Stages a ticket nobody sees yet (REVERSIBLE: delete it). */
  createDraft(params: TicketParams): Promise<Ticket> {
    return this.insert("createDraft", params, "draft");
  }

  /** Puts a ticket straight into the support queue (COMPENSATABLE: close it). */
  create(params: TicketParams): Promise<Ticket> {
    return this.insert("create", params, "open");
  }

  /** Moves a draft into the queue (the commit after the pivot). */
  open(ticketId: string): Promise<Ticket> {
    return this.change("open", ticketId, {}, (t) => {
      if (t.status !== "draft") throw new ProviderRejection(409, "not_a_draft");
      t.status = "open";
    });
  }

  /** Deletes a draft without trace; anything already in the queue must be closed instead. */
  async deleteDraft(ticketId: string): Promise<void> {
    await this.change("deleteDraft", ticketId, {}, (t) => {
      if (t.status !== "draft") throw new ProviderRejection(409, "not_a_draft");
      this.tickets.delete(t.id);
    });
  }

  /** Closes with a reason; closing twice is refused, closing a ticket that never existed is a 404. */
  close(ticketId: string, reason: string): Promise<Ticket> {
    return this.change("close", ticketId, { reason }, (t) => {
      if (t.status === "closed") throw new ProviderRejection(409, "already_closed");
      t.status = "closed";
      t.closeReason = reason;
    });
  }

  /** Direct retrieval is never lagged. */
  get(ticketId: string): Promise<Ticket | undefined> {
    return this.read(() => this.tickets.get(ticketId));
  }

  /** JQL-style label search, drafts included, lagging behind writes. */
  searchByLabel(label: string): Promise<Ticket[]> {
    return this.read(() =>
      [...this.tickets.values()].filter((t) => t.labels.includes(label) && this.searchable(t.createdAt)),
    );
  }

  /** What the support team sees: open tickets, unlagged (the queue is not the search index). */
  supportQueue(): Promise<Ticket[]> {
    return this.read(() => [...this.tickets.values()].filter((t) => t.status === "open"));
  }

  private insert(op: string, params: TicketParams, status: TicketStatus): Promise<Ticket> {
    return this.mutate(op, params, { key: ticketSagaKey(params.labels) }, () => {
      const ticket: Ticket = {
        id: `SUP-${this.nextNumber++}`,
        summary: params.summary,
        orderId: params.orderId,
        labels: [...params.labels],
        status,
        createdAt: this.clock.now(),
      };
      this.tickets.set(ticket.id, ticket);
      return { value: ticket, ref: ticket.id };
    });
  }

  private change(op: string, ticketId: string, extra: object, apply: (t: Ticket) => void): Promise<Ticket> {
    const existing = this.tickets.get(ticketId);
    const key = existing && ticketSagaKey(existing.labels);
    return this.mutate(op, { ticketId, ...extra }, { key, ref: ticketId }, () => {
      const ticket = this.tickets.get(ticketId);
      if (!ticket) throw this.notFound("ticket", ticketId);
      apply(ticket);
      return { value: ticket, ref: ticketId };
    });
  }
}
