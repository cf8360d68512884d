/**
 * Durations as people type them: an amount and a unit (minutes, hours, days), converted to seconds
 * exactly. A stored value is shown in the largest unit that holds it whole, so loading and saving a
 * form never changes it (60 s reads "1 minute", not "0.02 hours" that saves back as 72 s).
 */

import type { ToolClass } from "@/packages/client/src/saga/vocabulary";

/** Default revocation window per class, when a tool enters the table without one or changes class. */
export const DEFAULT_WINDOW_SEC: Record<ToolClass, number | null> = { PURE: null, REVERSIBLE: 24 * 3600, COMPENSATABLE: 24 * 3600, IRREVERSIBLE: null };

/** The units a duration field offers, largest first. */
export const DURATION_UNITS = [
  { unit: "days", seconds: 86_400 },
  { unit: "hours", seconds: 3_600 },
  { unit: "minutes", seconds: 60 },
  { unit: "seconds", seconds: 1 },
] as const;
/** A unit a duration field offers. */
export type DurationUnit = (typeof DURATION_UNITS)[number]["unit"];

/** A duration as the form holds it. */
export interface DurationDraft {
  /** The amount as typed ("" for none). */
  amount: string;
  /** Its unit. */
  unit: DurationUnit;
}

function secondsPer(unit: DurationUnit): number {
  return DURATION_UNITS.find((u) => u.unit === unit)?.seconds ?? 1;
}

/** Stored seconds as the form shows them: the largest unit that holds them whole (hours for none). */
export function durationDraftOf(seconds: number | null): DurationDraft {
  if (seconds === null) return { amount: "", unit: "hours" };
  const unit = DURATION_UNITS.find((u) => seconds !== 0 && seconds % u.seconds === 0) ?? { unit: "hours" as const, seconds: 3_600 };
  return { amount: String(seconds / unit.seconds), unit: unit.unit };
}

/** What the form holds, in seconds (null for empty; NaN stays NaN so the server names the field). */
export function secondsOfDraft(draft: DurationDraft): number | null {
  if (draft.amount.trim() === "") return null;
  return Math.round(Number(draft.amount) * secondsPer(draft.unit));
}

/**
 * A duration as typed on a command line ("90d", "12h", "30m", "45s", or "2w"), in seconds; null when
 * it is not one (the caller says what was wrong).
 */
export function parseDurationText(text: string): number | null {
  const m = /^\s*(\d+)\s*(w|d|h|m|s)\s*$/i.exec(text);
  if (!m) return null;
  const per = { w: 604_800, d: 86_400, h: 3_600, m: 60, s: 1 }[(m[2] as string).toLowerCase() as "w" | "d" | "h" | "m" | "s"];
  return Number(m[1]) * per;
}
