/** The simulated world of the demo and the tests: five services sharing one clock, ledger and fault set. */
import { systemClock, type Clock } from "@/packages/client/src/saga/clock";
import { CrmSim } from "./crm";
import { EmailSim } from "./email";
import { FaultInjector } from "./faults";
import { Ledger, type Outcome } from "./ledger";
import { PaymentsSim } from "./payments";
import type { SimSystem } from "./system";
import { TicketingSim } from "./ticketing";
import { WarehouseSim } from "./warehouse";

/** How to build a World. */
export interface WorldOptions {
  /** Tests pass a ManualClock so lag and slow faults are deterministic. */
  clock?: Clock;
  /** Initial search lag of every system. */
  searchLagMs?: number;
}

/** Attempt counts per system, then per op (without the system prefix), then per outcome. */
export type WorldSummary = Record<string, Record<string, Partial<Record<Outcome, number>>>>;

/** All simulated services, wired together. */
export class World {
  /** The one clock every system reads. */
  readonly clock: Clock;
  /** One log for all systems, so a scenario's whole effect on the world can be asserted at once. */
  readonly ledger: Ledger;
  /** One place to arm faults, by qualified op name ("ticketing.create"). */
  readonly faults: FaultInjector;
  /** Stripe-like. */
  readonly payments: PaymentsSim;
  /** Jira-like. */
  readonly ticketing: TicketingSim;
  /** Email API. */
  readonly email: EmailSim;
  /** Warehouse API. */
  readonly warehouse: WarehouseSim;
  /** CRM. */
  readonly crm: CrmSim;

  constructor(opts: WorldOptions = {}) {
    this.clock = opts.clock ?? systemClock;
    this.ledger = new Ledger(this.clock);
    this.faults = new FaultInjector();
    const shared = { clock: this.clock, ledger: this.ledger, faults: this.faults, searchLagMs: opts.searchLagMs };
    this.payments = new PaymentsSim(shared);
    this.ticketing = new TicketingSim(shared);
    this.email = new EmailSim(shared);
    this.warehouse = new WarehouseSim(shared);
    this.crm = new CrmSim(shared);
  }

  /** Every system, for iteration. */
  get systems(): SimSystem[] {
    return [this.payments, this.ticketing, this.email, this.warehouse, this.crm];
  }

  /** Sets the search lag of every system at once. */
  setSearchLag(ms: number): void {
    for (const system of this.systems) system.searchLagMs = ms;
  }

  /** Counts for printing: e.g. `{ payments: { charge: { effect: 2 }, refund: { effect: 1 } } }`. */
  summary(): WorldSummary {
    const out: WorldSummary = {};
    for (const e of this.ledger.operations()) {
      const ops = (out[e.system] ??= {});
      const counts = (ops[e.op.slice(e.system.length + 1)] ??= {});
      counts[e.outcome] = (counts[e.outcome] ?? 0) + 1;
    }
    return out;
  }
}
