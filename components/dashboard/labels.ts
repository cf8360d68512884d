import { OTHER_SYSTEM, systemInWords } from "@/lib/server/tools/tool-systems";
// Words for the dashboard's vocabularies, in one place so every screen names things the same way.

/** An escalation kind in words (`APPROVAL_REQUIRED` -> "approval required"). */
export function kindLabel(kind: string): string {
  return kind.replaceAll("_", " ").toLowerCase();
}

/** What a person does about each escalation kind, in one line. */
export const KIND_HINTS: Record<string, string> = {
  APPROVAL_REQUIRED: "An irreversible call (or one with no possible undo) is held until someone approves or rejects it.",
  COMPENSATION_FAILED: "An undo could not be completed; something is still out there. Repair it by hand and record what you did.",
  OUTCOME_UNKNOWN: "Nobody knows whether this call happened. Check the real system, then record what you found.",
  STUCK_AFTER_PIVOT: "An approved run cannot finish by itself: its agent went quiet after the pivot, or a commit step failed. Decide what happens to it.",
  REVOKE_OUT_OF_WINDOW: "Someone wanted to undo an action after its revocation window closed. Record what was done instead.",
};

/** The blast radius of an audience rank. */
export const RANK_LABELS = ["internal", "partner", "customer"] as const;

/** A system name for headings; a tool whose row names no system is grouped as "System not named". */
export function systemLabel(system: string): string {
  if (system === OTHER_SYSTEM) return "System not named";
  return system === "crm" ? "CRM" : system.charAt(0).toUpperCase() + system.slice(1);
}

/** A system in the middle of a sentence: its heading name, or "the system <tool> acts on" when none is named. */
export function systemInSentence(system: string, tool: string): string {
  return system === OTHER_SYSTEM ? systemInWords(system, tool) : systemLabel(system);
}

export { REJECTION_CODE_LABELS } from "@/lib/desks/dashboard/reason-words";

export { audienceInWords } from "@/lib/desks/dashboard/audience-words";
