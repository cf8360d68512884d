"use client";

import { useQuery } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import type { SlaCountdown } from "@/lib/server/sla/get-sla-countdown";
import { formatDuration } from "@/components/saga-display";

/**
 * Whether the item still waits, as the screen beside this clock last read it: the pivot screen and
 * the escalation workbench poll their item under these react-query keys, and this clock reads the
 * same cache (it never fetches), so a decision made here or elsewhere ends the countdown at once.
 */
function useStillWaiting(itemId: string): boolean {
  const pivot = itemId.startsWith("piv_");
  const { data } = useQuery<unknown>({ queryKey: [pivot ? "pivot" : "escalation", itemId], enabled: false });
  if (!data || typeof data !== "object") return true;
  if (pivot) return (data as { pivot?: { status?: unknown } }).pivot?.status === "PENDING";
  return (data as { escalation?: { status?: unknown } }).escalation?.status !== "RESOLVED";
}

/** "in 23h 57m", "4m 10s ago": the same words as every other clock of the dashboard (formatDuration). */
function left(ms: number): string {
  const text = formatDuration(Math.round(Math.abs(ms) / 1000));
  return ms >= 0 ? `in ${text}` : `${text} ago`;
}

/** An SLA rule's name in words: "the default for approval required items", "the rule for send_email". */
function ruleInWords(rule: string): string {
  const isDefault = rule.startsWith("default:");
  const target = rule.replace(/^default:/, "");
  const what = target === "pivot" ? "pivots" : target.startsWith("kind:") ? `${target.slice(5).replaceAll("_", " ").toLowerCase()} items` : target.startsWith("tool:") ? target.slice(5) : target;
  return isDefault ? `the default for ${what}` : `the rule for ${what}`;
}

/** Reminder, breach and expiry as a live countdown, ticking from the database clock's reading. */
export function SlaCountdownClock({ itemId, countdown }: { itemId: string; countdown: SlaCountdown }) {
  const waiting = useStillWaiting(itemId);
  // The offset between the database clock and this browser's, measured once: the countdown keeps
  // the database's time even when the browser's clock is wrong.
  const [offset] = useState(() => Date.parse(countdown.now) - Date.now());
  const [now, setNow] = useState(() => Date.parse(countdown.now));
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now() + offset), 1000);
    return () => clearInterval(timer);
  }, [offset]);
  const breach = Date.parse(countdown.breachAt) - now;
  const reminder = Date.parse(countdown.reminderAt) - now;
  const expiry = countdown.expireAt ? Date.parse(countdown.expireAt) - now : null;
  if (!waiting) return null;
  const tone = expiry !== null && expiry < 0 ? "passed" : breach < 0 ? "passed" : reminder < 0 ? "soon" : "";
  return (
    <p className="notice" role="timer" aria-label="SLA countdown" data-testid="sla-countdown">
      <strong>SLA</strong> ({ruleInWords(countdown.rule)}):{" "}
      <span className={`countdown ${tone}`}>
        {`breached ${left(breach)}`}
        {countdown.backupTeam ? `, then ${countdown.backupTeam} is told` : ""}
      </span>
      {reminder >= 0 && <> · reminder {left(reminder)}</>}
      {expiry !== null && (
        <>
          {" "}
          · <span className={`countdown ${expiry < 0 ? "passed" : breach < 0 ? "soon" : ""}`}>{expiry >= 0 ? `rejected ${left(expiry)} if nobody decides` : "expired: being rejected"}</span> (never approved by default)
        </>
      )}
    </p>
  );
}
