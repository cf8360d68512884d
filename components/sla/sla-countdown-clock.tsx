"use client";

import { useEffect, useState } from "react";
import type { SlaCountdown } from "@/lib/sla/get-sla-countdown";

function left(ms: number): string {
  const sec = Math.round(Math.abs(ms) / 1000);
  const h = Math.floor(sec / 3600);
  const m = Math.floor((sec % 3600) / 60);
  const s = sec % 60;
  const text = h > 0 ? `${h} h ${String(m).padStart(2, "0")} min` : m > 0 ? `${m} min ${String(s).padStart(2, "0")} s` : `${s} s`;
  return ms >= 0 ? `in ${text}` : `${text} ago`;
}

/** Reminder, breach and expiry as a live countdown, ticking from the database clock's reading. */
export function SlaCountdownClock({ countdown }: { countdown: SlaCountdown }) {
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
  const tone = expiry !== null && expiry < 0 ? "passed" : breach < 0 ? "passed" : reminder < 0 ? "soon" : "";
  return (
    <p className="notice" role="timer" aria-label="SLA countdown" data-testid="sla-countdown">
      <strong>SLA</strong> ({countdown.rule.replace(/^default:/, "default for ")}):{" "}
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
