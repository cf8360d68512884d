"use client";

import Link from "@/components/link";
import { useState, type FormEvent } from "react";
import { Time } from "@/components/saga-display";
import { errorMessage, LiveMarker, postJson, postParsed, useLive } from "@/components/dashboard/live";
import { NOTIFICATION_TOPICS, TOPIC_LABELS, type NotificationTopic } from "@/lib/core/outbox/vocabulary";
import { ZCreatedWebhook, ZNotificationSettings, type TDeliveryView, type TNotificationSettings, type TWebhookView } from "@/lib/server/notifications/webhook-views";
import styles from "./people.module.css";
import own from "./webhooks.module.css";
import { SecretOnce } from "./secret-once";
import { DashboardPath } from "@/lib/delivery/dashboard-paths";
import { BackLink } from "@/components/section";

type Message = { tone: "good" | "bad"; text: string };

const STATUS_WORDS: Record<TDeliveryView["status"], [string, string]> = {
  PENDING: ["waiting to retry", "status-pending"],
  SENDING: ["sending", "status-active"],
  DELIVERED: ["delivered", "status-good"],
  FAILED: ["failed (gave up)", "status-bad"],
};

function seconds(sec: number | null): string {
  if (sec === null) return "never";
  return sec % 3600 === 0 ? `${sec / 3600} h` : sec % 60 === 0 ? `${sec / 60} min` : `${sec} s`;
}

/** One hook's delivery log, newest first, with a replay button per delivery. */
function DeliveryLog({ hook, onReplay, busy }: { hook: TWebhookView; onReplay: (d: TDeliveryView) => void; busy: string | null }) {
  if (hook.deliveries.length === 0) return <p className="empty-inline">No deliveries yet: the next event of its topics will show here.</p>;
  return (
    <div className="table-wrap">
      <table aria-label={`Deliveries of ${hook.name}`} className={styles.stacked}>
        <thead>
          <tr>
            <th>Event</th>
            <th>Status</th>
            <th>Attempts</th>
            <th>Last answer</th>
            <th>Created</th>
            <th>
              <span className="muted">Action</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {hook.deliveries.map((d) => {
            const [words, tone] = STATUS_WORDS[d.status];
            return (
              <tr key={d.id} data-delivery={d.id}>
                <td data-label="Event">
                  <div className="cell-stack">
                    <span>{TOPIC_LABELS[d.topic as NotificationTopic] ?? d.topic}</span>
                    <span className="cell-label">
                      {d.runId ? <Link href={`/runs/${d.runId}`}>{d.runId}</Link> : null} · <code>{d.id}</code>
                    </span>
                  </div>
                </td>
                <td className="nowrap" data-label="Status">
                  <span className={`badge ${tone}`}>{words}</span>
                  {d.status === "PENDING" && d.attempts > 0 && (
                    <div className="cell-label">
                      next try <Time at={d.nextAttemptAt} />
                    </div>
                  )}
                </td>
                <td data-label="Attempts">{d.attempts}</td>
                <td data-label="Last answer">{d.lastError ? <span className="small">{d.lastError}</span> : d.lastStatusCode ? <span className="small">HTTP {d.lastStatusCode}</span> : <span className="muted">—</span>}</td>
                <td className={own.wrap} data-label="Created">
                  <Time at={d.createdAt} />
                  {d.replayedBy && <div className="cell-label">replayed by {d.replayedBy}</div>}
                </td>
                <td className={styles.actions}>
                  <button type="button" className="button small" disabled={busy === d.id || d.status === "SENDING"} onClick={() => onReplay(d)}>
                    Replay
                  </button>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** The notifications desk: webhooks (create, delivery log, replay), teams' addresses, SLA rules. */
export function WebhooksAdmin({ initial }: { initial: TNotificationSettings }) {
  const { data, error, refetch } = useLive<TNotificationSettings>(["admin-webhooks"], DashboardPath.findNotificationSettings, initial, ZNotificationSettings);
  const [message, setMessage] = useState<Message | null>(null);
  const [created, setCreated] = useState<{ name: string; secret: string } | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [topics, setTopics] = useState<string[]>([...NOTIFICATION_TOPICS]);
  const [confirmDelete, setConfirmDelete] = useState<string | null>(null);

  async function act(key: string, fn: () => Promise<string>) {
    setBusy(key);
    setMessage(null);
    try {
      setMessage({ tone: "good", text: await fn() });
      await refetch();
    } catch (e) {
      setMessage({ tone: "bad", text: errorMessage(e) });
    } finally {
      setBusy(null);
    }
  }

  function createHook(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const target = e.currentTarget;
    void act("create", async () => {
      const result = await postParsed(DashboardPath.createWebhook, ZCreatedWebhook, { name: String(form.get("name") ?? ""), url: String(form.get("url") ?? ""), topics });
      setCreated({ name: result.webhook.name, secret: result.secret });
      target.reset();
      return `Webhook “${result.webhook.name}” created.`;
    });
  }

  function saveTeam(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const emails = String(form.get("emails") ?? "")
      .split(/[\s,;]+/)
      .filter(Boolean);
    void act("team", async () => {
      await postJson(DashboardPath.saveNotificationTeam, { name: String(form.get("team") ?? ""), emails });
      return emails.length ? `Saved the addresses of ${String(form.get("team"))}.` : `Removed ${String(form.get("team"))}.`;
    });
  }

  function saveRule(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const minutes = (name: string) => (String(form.get(name) ?? "").trim() === "" ? null : Math.round(Number(form.get(name)) * 60));
    void act("rule", async () => {
      await postJson(DashboardPath.saveSlaRule, {
        target: String(form.get("target") ?? ""),
        slaSec: minutes("sla"),
        reminderAt: Number(form.get("reminder") ?? 50) / 100,
        backupTeam: String(form.get("backup") ?? "").trim() || null,
        expireSec: minutes("expire"),
      });
      return `Saved the SLA rule for ${String(form.get("target"))}.`;
    });
  }

  return (
    <>
      <BackLink href="/">Runs</BackLink>
      <div className="page-head">
        <div>
          <h1>Notifications and SLAs</h1>
          <p className="muted">
            Webhooks and emails go out from the notifier (<code>npm run notifier</code>), never from a decision. Email is {data.emailConfigured ? "on" : "off: set SAGABOARD_SMTP_URL where the notifier runs"}. The notifier&apos;s backlog and errors beside the workers&apos;: <Link href="/admin/operations">Operations</Link>.
          </p>
        </div>
        <LiveMarker error={error} />
      </div>

      <div className={styles.messages} aria-live="polite">
        {message && (
          <div className={message.tone === "bad" ? "banner bad" : "banner info"} role={message.tone === "bad" ? "alert" : "status"}>
            {message.text}{" "}
            <button type="button" className="link-button small" onClick={() => setMessage(null)}>
              Dismiss
            </button>
          </div>
        )}
      </div>

      {created && (
        <SecretOnce title={`Webhook “${created.name}” created`} detail="Give this secret to the receiver" label="Signing secret" value={created.secret} testId="webhook-secret" onDone={() => setCreated(null)}>
          <p>
            <span className={styles.warning}>This secret will not be shown again.</span> Every delivery carries <code>Sagaboard-Signature: t=&lt;unix time&gt;,v1=&lt;HMAC-SHA256 of “t.body”&gt;</code>; the receiver checks it and dedupes on <code>Sagaboard-Delivery</code>.
          </p>
        </SecretOnce>
      )}

      <section className={`panel ${styles.createPanel}`} aria-labelledby="create-hook-title">
        <h2 id="create-hook-title">New webhook</h2>
        <form onSubmit={createHook}>
          <div className={styles.fields}>
            <div className={styles.field}>
              <label htmlFor="hook-name">Name</label>
              <input id="hook-name" name="name" required maxLength={80} placeholder="ops-pager" />
            </div>
            <div className={styles.field}>
              <label htmlFor="hook-url">URL</label>
              <input id="hook-url" name="url" type="url" required placeholder="https://hooks.example.com/sagaboard" />
            </div>
          </div>
          <fieldset className={own.topics}>
            <legend>Topics</legend>
            <div className={own.topicList}>
              {NOTIFICATION_TOPICS.map((t) => (
                <label key={t} className={own.topic}>
                  <input type="checkbox" checked={topics.includes(t)} onChange={(e) => setTopics(e.target.checked ? [...topics, t] : topics.filter((x) => x !== t))} /> {TOPIC_LABELS[t]}
                </label>
              ))}
            </div>
          </fieldset>
          <div className={styles.formActions}>
            <button type="submit" className="button primary" disabled={busy === "create" || topics.length === 0}>
              Create webhook
            </button>
          </div>
        </form>
      </section>

      <section className="section" aria-labelledby="hooks-head">
        <h2 id="hooks-head">
          Webhooks <span className="count">{data.webhooks.length}</span>
        </h2>
        {data.webhooks.length === 0 ? (
          <div className="empty">
            <strong>No webhooks yet.</strong>
            Create one above to send pivots, escalations, SLA breaches, corrections and revokes to another system.
          </div>
        ) : (
          data.webhooks.map((hook) => (
            <section key={hook.id} className={`panel ${own.hook}`} aria-label={`Webhook ${hook.name}`} data-webhook={hook.name}>
              <h3>
                {hook.name} <span className={`badge ${hook.enabled ? "status-good" : "status-done"}`}>{hook.enabled ? "on" : "off"}</span>
              </h3>
              <p className="muted small">
                <code>{hook.url}</code> · {hook.topics.map((t) => TOPIC_LABELS[t as NotificationTopic] ?? t).join(", ")} · created by {hook.createdBy} ·{" "}
                {Object.entries(hook.counts)
                  .map(([s, n]) => `${n} ${STATUS_WORDS[s as TDeliveryView["status"]]?.[0] ?? s}`)
                  .join(", ") || "no deliveries"}
              </p>
              <div className={styles.formActions}>
                <button
                  type="button"
                  className="button small"
                  disabled={busy === `state:${hook.id}`}
                  onClick={() =>
                    void act(`state:${hook.id}`, async () => {
                      await postJson(DashboardPath.setWebhookEnabled, { webhookId: hook.id, enabled: !hook.enabled });
                      return hook.enabled ? `Webhook “${hook.name}” disabled: its deliveries wait until it is enabled and replayed.` : `Webhook “${hook.name}” enabled.`;
                    })
                  }
                >
                  {hook.enabled ? "Disable" : "Enable"}
                </button>
                {confirmDelete === hook.id ? (
                  <span role="group" aria-label={`Confirm deleting ${hook.name}`}>
                    <span className="small">Delete “{hook.name}”? Its waiting deliveries are given up; the log stays. </span>
                    <button
                      type="button"
                      className="button small reject"
                      disabled={busy === `delete:${hook.id}`}
                      onClick={() =>
                        void act(`delete:${hook.id}`, async () => {
                          await postJson(DashboardPath.deleteWebhook, { webhookId: hook.id });
                          setConfirmDelete(null);
                          return `Webhook “${hook.name}” deleted.`;
                        })
                      }
                    >
                      Yes, delete
                    </button>{" "}
                    <button type="button" className="button small" onClick={() => setConfirmDelete(null)}>
                      Keep it
                    </button>
                  </span>
                ) : (
                  <button type="button" className="button small" onClick={() => setConfirmDelete(hook.id)}>
                    Delete…
                  </button>
                )}
              </div>
              <DeliveryLog
                hook={hook}
                busy={busy}
                onReplay={(d) =>
                  void act(d.id, async () => {
                    await postJson(DashboardPath.replayDelivery, { deliveryId: d.id });
                    return `Delivery ${d.id} will be sent again with the same delivery id.`;
                  })
                }
              />
            </section>
          ))
        )}
      </section>

      <section className="section" aria-labelledby="teams-head">
        <h2 id="teams-head">Teams</h2>
        <p className="muted small">Escalations are emailed to their owner team (the tool table’s owner); a team without addresses falls back to the reviewers. SLA breaches also go to the rule’s backup team.</p>
        {data.teams.length > 0 && (
          <ul>
            {data.teams.map((t) => (
              <li key={t.name}>
                <strong>{t.name}</strong>: {t.emails.join(", ")}
              </li>
            ))}
          </ul>
        )}
        <form onSubmit={saveTeam} className={styles.fields}>
          <div className={styles.field}>
            <label htmlFor="team-name">Team</label>
            <input id="team-name" name="team" required placeholder="payments-ops" />
          </div>
          <div className={styles.field}>
            <label htmlFor="team-emails">Addresses (empty removes the team)</label>
            <input id="team-emails" name="emails" placeholder="ana@example.com, li@example.com" />
          </div>
          <div className={styles.formActions}>
            <button type="submit" className="button" disabled={busy === "team"}>
              Save team
            </button>
          </div>
        </form>
      </section>

      <section className="section" aria-labelledby="sla-head">
        <h2 id="sla-head">SLA rules</h2>
        <p className="muted small">
          Per target: <code>pivot</code>, <code>kind:APPROVAL_REQUIRED</code> (any escalation kind) or <code>tool:send_email</code> (wins over its kind). A reminder at a share of the SLA, a breach at the SLA (the backup team is told), and for pivots and held calls an expiry that rejects: nothing is ever approved because nobody answered. Judged by the database clock; targets without a rule use the defaults (pivots and held calls 4 h, expiring at 24 h; repairs 2–4 h).
        </p>
        {data.slaRules.length > 0 && (
          <div className="table-wrap">
            <table aria-label="SLA rules" className={styles.stacked}>
              <thead>
                <tr>
                  <th>Target</th>
                  <th>SLA</th>
                  <th>Reminder</th>
                  <th>Backup team</th>
                  <th>Expires (rejected)</th>
                </tr>
              </thead>
              <tbody>
                {data.slaRules.map((r) => (
                  <tr key={r.target}>
                    <td data-label="Target">
                      <code>{r.target}</code>
                    </td>
                    <td data-label="SLA">{seconds(r.slaSec)}</td>
                    <td data-label="Reminder">at {Math.round(r.reminderAt * 100)} %</td>
                    <td data-label="Backup team">{r.backupTeam ?? <span className="muted">none</span>}</td>
                    <td data-label="Expires">{seconds(r.expireSec)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <form onSubmit={saveRule} className={styles.fields}>
          <div className={styles.field}>
            <label htmlFor="sla-target">Target</label>
            <input id="sla-target" name="target" required placeholder="tool:send_email" />
          </div>
          <div className={styles.field}>
            <label htmlFor="sla-minutes">SLA (minutes)</label>
            <input id="sla-minutes" name="sla" type="number" min={1} required defaultValue={240} />
          </div>
          <div className={styles.field}>
            <label htmlFor="sla-reminder">Reminder at (% of the SLA)</label>
            <input id="sla-reminder" name="reminder" type="number" min={1} max={99} defaultValue={50} />
          </div>
          <div className={styles.field}>
            <label htmlFor="sla-backup">Backup team</label>
            <input id="sla-backup" name="backup" placeholder="on-call" />
          </div>
          <div className={styles.field}>
            <label htmlFor="sla-expire">Expire after (minutes; empty: never)</label>
            <input id="sla-expire" name="expire" type="number" min={1} />
          </div>
          <div className={styles.formActions}>
            <button type="submit" className="button" disabled={busy === "rule"}>
              Save rule
            </button>
          </div>
        </form>
      </section>
    </>
  );
}
