/**
 * A call as a person reads it before letting it run: the tool, then its recipient or target, its
 * subject and its amount ("send_email to bo@example.com, “Your order…”", "refund_charge ch_1, EUR 18.00").
 * Pure, so the pivot's confirmation, the escalation page and the queue's bulk bar say it alike.
 */
import { moneyInWords } from "@/lib/desks/audit/event-words";

/** Arguments naming who or what a call acts on, in the order a person looks for them. */
const TARGET_KEYS = ["to", "recipient", "email", "customerId", "chargeId", "paymentIntentId", "orderId", "ticketId", "recordId", "draftId"] as const;

/** One line naming the call, its recipient or target, subject and amount. */
export function callInWords(call: { tool: string; args: unknown }): string {
  const args = call.args !== null && typeof call.args === "object" && !Array.isArray(call.args) ? (call.args as Record<string, unknown>) : {};
  const parts: string[] = [];
  const target = TARGET_KEYS.find((k) => typeof args[k] === "string" || Array.isArray(args[k]));
  if (target) {
    const value = args[target];
    const text = Array.isArray(value) ? value.filter((v) => typeof v === "string").join(", ") : String(value);
    parts.push(target === "to" || target === "recipient" || target === "email" ? `to ${text}` : `${target === "customerId" ? "for" : "on"} ${text}`);
  }
  if (typeof args.subject === "string") parts.push(`“${args.subject}”`);
  if (typeof args.amount === "number") parts.push(moneyInWords(args.amount, typeof args.currency === "string" ? args.currency : null));
  return `${call.tool}${parts.length > 0 ? ` ${parts.join(", ")}` : ""}`;
}
