import { BackLink } from "@/components/section";
import type { CurrentUser } from "@/lib/server/auth/current-user";
import type { MyTopic } from "@/lib/server/notifications/my-notifications";
import styles from "./me.module.css";

/** When a choice was made, in words (the page is read, not parsed). */
function changed(at: Date | null, roleDefault: boolean): string {
  return at ? `You chose this on ${at.toISOString().slice(0, 10)}; your role's default is ${roleDefault ? "on" : "off"}.` : "Your role's default.";
}

/**
 * A person's own email choices, one row per topic: a box to tick, what it is about, who gets it by
 * default, and why a topic cannot be turned on when the role may not act on it.
 */
export function MyNotifications({
  user,
  topics,
  message,
  save,
  emailConfigured,
}: {
  user: Pick<CurrentUser, "email" | "role">;
  topics: readonly MyTopic[];
  message: { text: string; ok: boolean } | null;
  save: (form: FormData) => Promise<void>;
  /** Whether this server sends email at all (SAGABOARD_SMTP_URL). */
  emailConfigured: boolean;
}) {
  const choosable = topics.filter((t) => t.allowed);
  // What the person can choose first; what their role cannot ask for after it, greyed.
  const listed = [...choosable, ...topics.filter((t) => !t.allowed)];
  return (
    <>
      <BackLink href="/">Runs</BackLink>
      <div className="page-head">
        <div>
          <h1>My notifications</h1>
          <p className="muted">
            What Sagaboard emails you about, at <strong>{user.email}</strong>. The same choices decide Slack direct messages about pivots where Slack is set up.
            Webhooks and team addresses are an admin&apos;s, on the Notifications page.
          </p>
        </div>
      </div>
      {message && (
        <p className={message.ok ? "banner info" : "banner bad"} role={message.ok ? "status" : "alert"} data-testid="my-notifications-message">
          {message.text}
        </p>
      )}
      {!emailConfigured && (
        <p className="banner warn" data-testid="no-smtp">
          This Sagaboard sends no email yet: no SMTP server is set up (an operator sets <code>SAGABOARD_SMTP_URL</code>). Your choices are kept and apply once it is.
        </p>
      )}
      {choosable.length === 0 ? (
        <p className="empty-inline" data-testid="my-notifications-empty">
          Your role ({user.role}) reads the dashboard and acts on nothing, so Sagaboard emails you about nothing. An admin can give you a role that decides pivots,
          works escalations or handles corrections.
        </p>
      ) : null}
      <form action={save} className={styles.choices} aria-label="Email me about">
        <ul className={styles.topicList}>
          {listed.map((t) => (
            <li key={t.topic} className={t.allowed ? styles.topic : `${styles.topic} ${styles.notAllowed}`} data-testid={`topic-${t.topic}`}>
              {t.allowed && <input type="hidden" name="listed" value={t.topic} />}
              <label className={styles.topicLabel}>
                <input type="checkbox" name={`email:${t.topic}`} defaultChecked={t.email} disabled={!t.allowed} />
                <span>{t.label}</span>
              </label>
              <p className={styles.topicDetail}>{t.detail}</p>
              <p className={styles.topicState}>{t.allowed ? changed(t.changedAt, t.roleDefault) : `Not for you: ${t.notAllowedBecause}.`}</p>
            </li>
          ))}
        </ul>
        {choosable.length > 0 && (
          <div className={styles.actions}>
            <button type="submit" className="button primary">
              Save my choices
            </button>
          </div>
        )}
      </form>
    </>
  );
}
