"use client";

/**
 * What the people desks (users, agent tokens) share: the page head, the message after an action,
 * the empty state and the pager, and the busy/message bookkeeping around one row action.
 */
import Link from "next/link";
import { useState, type ReactNode } from "react";
import { errorMessage, LiveMarker } from "@/components/dashboard/live";
import styles from "./people.module.css";
import { BackLink } from "@/components/section";

/** A sentence about the last change, or why it was refused. */
export type DeskMessage = { tone: "good" | "bad"; text: string };

/** The way back, the title with its one-line purpose, and whether the page is still updating. */
export function DeskHead({ title, lead, error }: { title: string; lead: ReactNode; error: unknown }) {
  return (
    <>
      <BackLink href="/">Runs</BackLink>
      <div className="page-head">
        <div>
          <h1>{title}</h1>
          <p className="muted">{lead}</p>
        </div>
        <LiveMarker error={error} />
      </div>
    </>
  );
}

/** The last action's message, dismissable; `testId` names it for the browser tests. */
export function DeskMessageBanner({ message, onDismiss, testId }: { message: DeskMessage | null; onDismiss: () => void; testId: string }) {
  return (
    <div className={styles.messages} aria-live="polite">
      {message && (
        <div className={message.tone === "bad" ? "banner bad" : "banner info"} role={message.tone === "bad" ? "alert" : "status"} data-testid={testId}>
          <span>{message.text}</span>
          <button type="button" className="link-button small" onClick={onDismiss}>
            Dismiss
          </button>
        </div>
      )}
    </div>
  );
}

/** Nothing to list: on a later page, the way back to the first; on the first, what to do. */
export function DeskEmpty({ what, cursor, firstPage, hint }: { what: string; cursor: string | undefined; firstPage: string; hint: ReactNode }) {
  return (
    <div className="empty">
      <strong>
        No {what} {cursor ? "on this page" : "yet"}.
      </strong>
      {cursor ? <Link href={firstPage}>Back to the first page</Link> : hint}
    </div>
  );
}

/** The first page (when on a later one) and the next one (when there is one). */
export function DeskPager({ cursor, nextCursor, href }: { cursor: string | undefined; nextCursor: string | null; href: (cursor: string | undefined) => string }) {
  return (
    <div className="pager">
      {cursor && <Link href={href(undefined)}>First page</Link>}
      {nextCursor && <Link href={href(nextCursor)}>Next page →</Link>}
    </div>
  );
}

/**
 * The state of a desk's row actions: which row is busy, the last message, and `act`, which runs one
 * action for a row, says what it did (or why it failed), refreshes the list and always clears the
 * busy row and whatever `settle` resets (an open confirmation).
 */
export function useDeskActions(refetch: () => Promise<unknown>, settle: () => void = () => undefined) {
  const [busy, setBusy] = useState<string | null>(null);
  const [message, setMessage] = useState<DeskMessage | null>(null);
  async function act(row: string, action: () => Promise<string>): Promise<void> {
    setBusy(row);
    setMessage(null);
    try {
      setMessage({ tone: "good", text: await action() });
      await refetch();
    } catch (e) {
      setMessage({ tone: "bad", text: errorMessage(e) });
    } finally {
      setBusy(null);
      settle();
    }
  }
  return { busy, message, setMessage, act };
}
