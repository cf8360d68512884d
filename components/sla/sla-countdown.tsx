import { getPrisma } from "@/lib/core/db/prisma";
import { getSlaCountdown } from "@/lib/server/sla/get-sla-countdown";
import { SlaCountdownClock } from "./sla-countdown-clock";

/**
 * The SLA countdown of a waiting pivot or escalation (nothing once it no longer waits), read on the
 * server with the database clock; the clock beside it ticks from that reading.
 */
export async function SlaCountdown({ itemId }: { itemId: string }) {
  let countdown;
  try {
    countdown = await getSlaCountdown(await getPrisma(), itemId);
  } catch (e) {
    // The item's own screen matters more than its countdown: say so and carry on.
    console.error("SLA countdown failed", e);
    return <p className="muted small">The SLA countdown could not be read just now.</p>;
  }
  return countdown ? <SlaCountdownClock itemId={itemId} countdown={countdown} /> : null;
}
