"use client";

// The pivot screen's keys: `a` approves and `r` goes to the reason box, never while a person is typing
// or holding Ctrl, Cmd or Alt (those keys belong to the browser and to what is being typed).

import { useEffect, type RefObject } from "react";

/** Whether a key press lands where a person types: there the key is text, not a command. */
function isTyping(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName);
}

/** While `enabled` (a reviewer may decide, and no dialog or editor is open), `a` calls `approve` and `r` focuses the reason box. */
export function usePivotKeys({ enabled, approve, reasonRef }: { enabled: boolean; approve: () => void; reasonRef: RefObject<HTMLTextAreaElement | null> }): void {
  useEffect(() => {
    if (!enabled) return;
    const onKey = (event: KeyboardEvent) => {
      if (event.ctrlKey || event.metaKey || event.altKey || isTyping(event.target)) return;
      if (event.key === "a") {
        event.preventDefault();
        approve();
      } else if (event.key === "r") {
        event.preventDefault();
        reasonRef.current?.focus();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [enabled, approve, reasonRef]);
}
