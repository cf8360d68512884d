/** Words the correction desk shows for its states, ranks and drafters. */
import type { CorrectionState, SendState } from "@/lib/desks/corrections/views";

/** A correction's state in words. */
export const STATE_LABELS: Record<CorrectionState, string> = {
  draft: "Draft",
  claimed: "Claimed",
  sending: "Sending",
  sent: "Sent",
  dismissed: "Dismissed",
};

/** Where a send stands, as a short badge. */
export const SEND_LABELS: Record<SendState, string> = {
  none: "",
  queued: "waiting for the worker",
  outcome_unknown: "outcome unknown",
  refused: "refused by the provider",
  confirmed: "sent",
};

/** Blast radius in words (packages/client/src/saga/vocabulary audienceRank). */
export function rankLabel(rank: number): string {
  return rank >= 2 ? "customer" : rank === 1 ? "partner" : "internal";
}

/** What drafted a correction, in words. */
export function drafterLabel(draftedBy: string | null): string {
  if (draftedBy?.startsWith("revoke:")) return `revoke ${draftedBy.slice("revoke:".length)}`;
  return "unwind";
}
