"use client";

/**
 * What the people desks (users, agent tokens) share: the live page of rows, the secret of what was
 * just created, the page head, the message after an action, the empty state and the pager, and the
 * busy/message bookkeeping around one row action.
 */
import Link from "@/components/link";
import { useState, type ReactNode } from "react";
import type { z } from "zod";
import { errorMessage, LiveMarker, useLive } from "@/components/dashboard/live";
import { dashboardUrl, type DashboardPath } from "@/lib/delivery/dashboard-paths";

type DeskListPath = (typeof DashboardPath)[keyof typeof DashboardPath];
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

/** What a people desk lists and where: its page of rows, read live, and the page's own address. */
export interface DeskPageOptions<TPage> {
  /** The react-query key's first part (the cursor is added). */
  queryKey: string;
  /** The dashboard API path that lists the rows. */
  path: DeskListPath;
  /** The desk's page (`/admin/users`), for the pager's links. */
  pagePath: string;
  /** The page's cursor, if not the first. */
  cursor: string | undefined;
  /** What the server rendered. */
  initial: TPage;
  /** The page's schema, to parse what polling reads. */
  schema: z.ZodType<TPage>;
  /** What an action resets once done (an open confirmation). */
  settle?: () => void;
}

/**
 * A people desk's state: the live page of rows, the row actions (`useDeskActions`), the link to a
 * page by cursor, and what was just created (its secret shown once): `onCreated` keeps it, clears
 * the last message and refreshes the list.
 */
export function useDeskPage<TPage, TCreated>({ queryKey, path, pagePath, cursor, initial, schema, settle }: DeskPageOptions<TPage>) {
  const query = cursor ? new URLSearchParams({ cursor }).toString() : "";
  const { data, error, refetch } = useLive<TPage>([queryKey, cursor ?? ""], dashboardUrl(path, {}, query), initial, schema);
  const actions = useDeskActions(refetch, settle);
  const [created, setCreated] = useState<TCreated | null>(null);
  async function onCreated(result: TCreated): Promise<void> {
    setCreated(result);
    actions.setMessage(null);
    await refetch();
  }
  const pageHref = (at: string | undefined) => (at ? `${pagePath}?cursor=${encodeURIComponent(at)}` : pagePath);
  return { data, error, refetch, ...actions, created, setCreated, onCreated, pageHref };
}
