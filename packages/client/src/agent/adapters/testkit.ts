/**
 * Test kit for the framework adapters: a fake trip world (a hotel system and a mail system) that
 * keeps a ledger of effects per idempotency key and never deduplicates, so a count above one per key
 * is a double effect an adapter let through. Deliberately not lib/demo/sim: these tests pin the adapters.
 */
import { z } from "zod";
import { CrashPoint, SimulatedCrash } from "../../saga/crash-points";
import { defineCompensator, type CompensatorDefinition, type Json } from "../../saga/tools";

/** How the next hotel booking behaves. */
export type BookingMode = "ok" | "crash-after" | "timeout-after";

/** One effect in the fake world. */
export interface Effect {
  /** The idempotency key the call carried. */
  key: string;
  /** What was asked. */
  args: Json;
  /** The external id the system gave it. */
  ref: string;
}

export const ZBookHotelArgs = z.object({ city: z.string().min(1), nights: z.number().int().positive() });
export const ZSendEmailArgs = z.object({ to: z.string().min(3), subject: z.string().min(1) });
export const ZFindHotelsArgs = z.object({ city: z.string().min(1) });

export class TripWorld {
  /** Hotel bookings, in the order they happened. */
  readonly bookings: Effect[] = [];
  /** Cancellations, by compensation key. */
  readonly cancellations: { compensationKey: string; bookingKey: string }[] = [];
  /** Emails sent, in the order they happened. */
  readonly emails: Effect[] = [];
  /** Searches made (pure: no ledger entry). */
  searches = 0;
  /** Behaviour of the next bookings, in order ("ok" once empty). */
  readonly bookingModes: BookingMode[] = [];

  bookingsFor(key: string): number {
    return this.bookings.filter((b) => b.key === key).length;
  }

  emailsFor(key: string): number {
    return this.emails.filter((e) => e.key === key).length;
  }

  async book(args: z.output<typeof ZBookHotelArgs>, key: string): Promise<{ bookingId: string; city: string; nights: number }> {
    const ref = `htl_${this.bookings.length + 1}`;
    this.bookings.push({ key, args, ref });
    const mode = this.bookingModes.shift() ?? "ok";
    if (mode === "crash-after") throw new SimulatedCrash(CrashPoint.AFTER_EFFECT);
    if (mode === "timeout-after") throw new Error("504 gateway timeout from the hotel system");
    return { bookingId: ref, city: args.city, nights: args.nights };
  }

  async findBooking(key: string): Promise<{ externalRef: string; result: Json } | null> {
    const b = this.bookings.find((x) => x.key === key);
    return b ? { externalRef: b.ref, result: { bookingId: b.ref, ...(b.args as { city: string; nights: number }) } } : null;
  }

  async send(args: z.output<typeof ZSendEmailArgs>, key: string): Promise<{ messageId: string }> {
    const ref = `msg_${this.emails.length + 1}`;
    this.emails.push({ key, args, ref });
    return { messageId: ref };
  }

  async findEmail(key: string): Promise<{ externalRef: string; result: Json } | null> {
    const e = this.emails.find((x) => x.key === key);
    return e ? { externalRef: e.ref, result: { messageId: e.ref } } : null;
  }

  async search(args: z.output<typeof ZFindHotelsArgs>): Promise<{ hotels: string[] }> {
    this.searches++;
    return { hotels: [`${args.city} Grand`, `${args.city} Inn`] };
  }

  /** The compensator of a booking: cancels it and confirms by reading the world back. */
  cancelHotel(): CompensatorDefinition {
    return defineCompensator({
      name: "cancel_hotel",
      args: z.object({ city: z.string() }),
      run: async (_a, ctx) => {
        this.cancellations.push({ compensationKey: ctx.compensationKey, bookingKey: ctx.target.stepKey });
        return { externalRef: null };
      },
      verify: async (_a, ctx) => ({ done: this.cancellations.some((c) => c.bookingKey === ctx.target.stepKey) }),
    }) as CompensatorDefinition;
  }
}
