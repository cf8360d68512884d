"use client";

import { runStatusInWords } from "@/lib/desks/dashboard/run-status-words";
import { audienceWords } from "@/components/audience-words";
import Link from "@/components/link";
import { useState, type FormEvent } from "react";
import { formatDuration, formatUtc, LabelledValues } from "@/components/saga-display";
import { DashboardRequestError, errorMessage, LiveMarker, postJson, postParsed, useLive } from "@/components/dashboard/live";
import { ZCorrectionClaimResult, ZSendCorrectionResult, ZCorrectionDetail, type TCorrectionDetail } from "@/lib/desks/corrections/views";
import { StateBadge } from "./correction-queue";
import { drafterLabel, rankLabel } from "./labels";
import styles from "./corrections.module.css";
import { dashboardUrl, DashboardPath } from "@/lib/delivery/dashboard-paths";
import { BackLink, FormError } from "@/components/section";

function Fact({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div className="fact-row">
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

function splitRecipients(text: string): string[] {
  return text
    .split(/[\s,;]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Field errors of a refused request, by the field's last name (`body.recipients.1` -> recipients). */
function fieldErrors(e: unknown): Record<string, string> {
  if (!(e instanceof DashboardRequestError)) return {};
  const out: Record<string, string> = {};
  for (const d of e.details) {
    const parts = d.path.split(".").filter((p) => p !== "body" || d.path === "body.body");
    const name = d.path === "body.body" ? "body" : (parts.find((p) => ["subject", "recipients", "reason", "body"].includes(p)) ?? "form");
    const index = /\.(\d+)$/.exec(d.path)?.[1];
    out[name] = index !== undefined ? `address ${Number(index) + 1}: ${d.message}` : d.message;
  }
  return out;
}

/** What the correction answers: the original effect, in words. */
function OriginalPanel({ c }: { c: TCorrectionDetail }) {
  const o = c.original;
  return (
    <section className="panel" aria-labelledby="original">
      <h2 id="original">What it answers</h2>
      <p className={o.seen ? "warn-line" : "muted"}>{o.seenText}</p>
      <dl className="facts-list">
        <Fact label="Original step">
          #{c.step.stepIdx} <code>{o.tool}</code> ({o.status.toLowerCase()})
        </Fact>
        <Fact label="When">{formatUtc(o.at)}</Fact>
        <Fact label="Went to">{o.recipients.length ? o.recipients.join(", ") : <span className="muted">no address in the call</span>}</Fact>
        <Fact label="Who could see it">{audienceWords(o.audience)}</Fact>
        {o.subject && <Fact label="Its subject">{o.subject}</Fact>}
        {o.text && (
          <Fact label="Its text">
            <span className="body-text">{o.text}</span>
          </Fact>
        )}
        <Fact label="External ref">{o.externalRef ? <code>{o.externalRef}</code> : <span className="muted">none recorded</span>}</Fact>
        <Fact label="Run">
          <Link href={`/runs/${encodeURIComponent(c.run.id)}`}>{c.run.title}</Link> <span className="muted small">({runStatusInWords(c.run.status)}, agent {c.run.agent})</span>
        </Fact>
      </dl>
      <details className="raw">
        <summary>The original call's arguments</summary>
        <LabelledValues value={o.args} rawLabel="Raw arguments" />
      </details>
      <h3 className={styles.stepsHeading}>Steps of that run</h3>
      <ol className={styles.steps}>
        {c.steps.map((s) => (
          <li key={s.id} className={s.id === c.step.id ? styles.thisStep : undefined}>
            <span>#{s.stepIdx}</span> <code>{s.tool}</code> <span className="muted small">{s.standing.toLowerCase().replace(/_/g, " ")}</span>
            {s.externalRef && <span className="muted small">· {s.externalRef}</span>}
            {s.id === c.step.id && <span className="small">← this correction answers it</span>}
          </li>
        ))}
      </ol>
    </section>
  );
}

/** Why a revoke drafted this correction: who pulled the effect back, as which role, when, and their reason in their words. */
function WhyDrafted({ revoke }: { revoke: NonNullable<TCorrectionDetail["revoke"]> }) {
  return (
    <section className="callout why-drafted" aria-labelledby="why-drafted" data-testid="why-drafted">
      <div>
        <h2 id="why-drafted" className="callout-title">
          Why it was drafted
        </h2>
        <p>
          {revoke.requestedByName ? `${revoke.requestedByName} (${revoke.requestedBy})` : revoke.requestedBy}, as {revoke.role}, pulled this effect back at {formatUtc(revoke.requestedAt)} UTC:
        </p>
        <blockquote className="body-text">{revoke.reason}</blockquote>
      </div>
    </section>
  );
}

function HistoryPanel({ c }: { c: TCorrectionDetail }) {
  const edited = c.drafted.subject !== c.subject || c.drafted.body !== c.body;
  return (
    <section className="panel" aria-labelledby="history">
      <h2 id="history">History</h2>
      {edited && (
        <div className={styles.diff} aria-label="Drafted and current text">
          <div>
            <h3>As drafted by {drafterLabel(c.draftedBy)}</h3>
            <strong>{c.drafted.subject}</strong>
            <p>{c.drafted.body}</p>
          </div>
          <div>
            <h3>{c.state === "sent" ? "As sent" : "As it stands"}</h3>
            <strong>{c.subject}</strong>
            <p>{c.body}</p>
          </div>
        </div>
      )}
      <ol className={styles.history}>
        {c.history.map((h, i) => (
          <li key={`${h.type}-${i}`}>
            <div>{h.text}</div>
            <div className={styles.historyWhen}>{formatUtc(h.at)}</div>
            <details className="raw">
              <summary>raw event</summary>
              <pre>{JSON.stringify({ type: h.type, actor: h.actor, data: h.data }, null, 2)}</pre>
            </details>
          </li>
        ))}
      </ol>
    </section>
  );
}

/** The editor, preview, send (with its confirmation) and dismiss of a draft the person holds. */
function WorkForm({ c, onChange }: { c: TCorrectionDetail; onChange: () => Promise<unknown> }) {
  const [subject, setSubject] = useState(c.subject);
  const [body, setBody] = useState(c.body);
  const [recipients, setRecipients] = useState(c.recipients.join(", "));
  const [reason, setReason] = useState("");
  const [confirming, setConfirming] = useState(false);
  const [dismissing, setDismissing] = useState(false);
  const [busy, setBusy] = useState(false);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [message, setMessage] = useState<string | null>(null);
  const list = splitRecipients(recipients);
  const dirty = subject !== c.subject || body !== c.body || list.join(",") !== c.recipients.join(",");
  const ids = { correctionId: c.id };

  async function run(fn: () => Promise<unknown>) {
    setBusy(true);
    setErrors({});
    setMessage(null);
    try {
      await fn();
      await onChange();
    } catch (e) {
      const fields = fieldErrors(e);
      setErrors(fields);
      // Errors about a field are shown beside it; only the rest needs a message of its own.
      setMessage(Object.keys(fields).some((k) => k !== "form") ? null : errorMessage(e));
    } finally {
      setBusy(false);
    }
  }

  function save(e: FormEvent) {
    e.preventDefault();
    void run(() => postJson(dashboardUrl(DashboardPath.editCorrection, ids), { expectedVersion: c.version, subject, body, recipients: list }));
  }

  return (
    <div className={styles.stack}>
      <form className={styles.editor} onSubmit={save} aria-label="Edit the correction">
        <label>
          To (one or more addresses)
          <input value={recipients} onChange={(e) => setRecipients(e.target.value)} aria-invalid={Boolean(errors.recipients)} autoComplete="off" />
          {errors.recipients && <span className={styles.fieldError}>{errors.recipients}</span>}
        </label>
        <label>
          Subject
          <input value={subject} onChange={(e) => setSubject(e.target.value)} aria-invalid={Boolean(errors.subject)} />
          {errors.subject && <span className={styles.fieldError}>{errors.subject}</span>}
        </label>
        <label>
          Message
          <textarea value={body} onChange={(e) => setBody(e.target.value)} aria-invalid={Boolean(errors.body)} />
          {errors.body && <span className={styles.fieldError}>{errors.body}</span>}
        </label>
        <div className={styles.actions}>
          <button type="submit" className="button" disabled={busy || !dirty}>
            Save changes
          </button>
          {dirty && <span className="muted small">Unsaved changes: save them before sending.</span>}
        </div>
      </form>

      <div className={styles.preview} aria-label="Preview">
        <h3>Preview</h3>
        <div className={styles.previewMeta}>
          To: {list.length ? list.join(", ") : "nobody yet"}
          <br />
          Subject: {subject || "(no subject)"}
        </div>
        <p className={styles.previewBody}>{body || "(empty message)"}</p>
      </div>

      <FormError message={message} />

      {confirming ? (
        <div className={styles.confirm} role="alertdialog" aria-label="Confirm sending">
          <p>
            <strong>Send this to {c.recipients.join(", ")}?</strong>
          </p>
          <p>An email cannot be taken back: once sent, only another message can answer it. It goes out once, through the worker, under its own key.</p>
          <div className={styles.actions}>
            <button type="button" className="button primary" disabled={busy} onClick={() => void run(() => postParsed(dashboardUrl(DashboardPath.sendCorrection, ids), ZSendCorrectionResult, { expectedVersion: c.version }))}>
              Yes, send it
            </button>
            <button type="button" className="button" disabled={busy} onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </div>
        </div>
      ) : (
        <div className={styles.actions}>
          <button type="button" className="button primary" disabled={busy || dirty || c.recipients.length === 0} onClick={() => setConfirming(true)}>
            Send…
          </button>
          <button type="button" className="button" disabled={busy} onClick={() => setDismissing((d) => !d)} aria-expanded={dismissing}>
            Dismiss…
          </button>
          <button type="button" className="link-button" disabled={busy} onClick={() => void run(() => postParsed(dashboardUrl(DashboardPath.releaseCorrection, ids), ZCorrectionClaimResult))}>
            Give it back to the queue
          </button>
        </div>
      )}

      {dismissing && !confirming && (
        <form
          className={styles.editor}
          aria-label="Dismiss the correction"
          onSubmit={(e) => {
            e.preventDefault();
            void run(() => postJson(dashboardUrl(DashboardPath.dismissCorrection, ids), { reason }));
          }}
        >
          <label>
            Why is nothing sent?
            <textarea value={reason} onChange={(e) => setReason(e.target.value)} placeholder="e.g. the customer never saw the original; handled by phone" aria-invalid={Boolean(errors.reason)} />
            {errors.reason && <span className={styles.fieldError}>{errors.reason}</span>}
          </label>
          <div className={styles.actions}>
            <button type="submit" className="button" disabled={busy}>
              Dismiss without sending
            </button>
          </div>
        </form>
      )}
    </div>
  );
}

/** One correction: what it answers, the draft to edit and send (or dismiss), and its history. Live. */
export function CorrectionWorkbench({ initial }: { initial: TCorrectionDetail & { me: string; canHandle: boolean } }) {
  const { me, canHandle } = initial;
  const { data, error, refetch } = useLive<TCorrectionDetail>(["correction", initial.id], dashboardUrl(DashboardPath.getCorrection, { correctionId: initial.id }), initial, ZCorrectionDetail);
  const c = data;
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState<string | null>(null);
  const mine = c.state === "claimed" && c.claimedBy === me;

  async function claim() {
    setBusy(true);
    setNote(null);
    try {
      const result = await postParsed(dashboardUrl(DashboardPath.claimCorrection, { correctionId: c.id }), ZCorrectionClaimResult);
      if (!result.ok && result.reason === "held") setNote(`${result.heldByName ?? result.heldBy} holds it.`);
      await refetch();
    } catch (e) {
      setNote(errorMessage(e));
    } finally {
      setBusy(false);
    }
  }

  return (
    <>
      <BackLink href="/corrections">Corrections</BackLink>
      <div className="page-head">
        <div>
          <div className="title-line">
            <span className={`radius radius-${c.rank}`}>{rankLabel(c.rank)}</span>
            <StateBadge item={c} />
          </div>
          <h1>{c.subject}</h1>
          <p className="muted">
            For {c.audience.join(", ")} · drafted by {drafterLabel(c.draftedBy)} {formatDuration(c.ageSeconds)} ago · {c.sla.label}
          </p>
        </div>
        <LiveMarker error={error} />
      </div>
      {c.revoke && <WhyDrafted revoke={c.revoke} />}

      <div className="workbench">
        <div className={styles.stack}>
          <OriginalPanel c={c} />
          <HistoryPanel c={c} />
        </div>
        <section className="panel resolve-panel" aria-labelledby="handle">
          <h2 id="handle">{c.state === "sent" ? "Sent" : c.state === "dismissed" ? "Dismissed" : c.state === "sending" ? "Sending" : "The correction"}</h2>
          {c.state === "sent" && (
            <dl className="facts-list compact">
              <Fact label="Sent by">{c.sentBy}</Fact>
              <Fact label="When">{c.sentAt ? formatUtc(c.sentAt) : "—"}</Fact>
              <Fact label="To">{c.recipients.join(", ")}</Fact>
              <Fact label="Message id">
                <code>{c.messageId}</code>
              </Fact>
              {c.sendRunId && (
                <Fact label="Send run">
                  <Link href={`/runs/${encodeURIComponent(c.sendRunId)}`}>its logged step</Link>
                </Fact>
              )}
            </dl>
          )}
          {c.state === "sending" && (
            <>
              <p className={c.send === "outcome_unknown" || c.send === "refused" ? "warn-line" : undefined} role="status">
                {c.sendText}
              </p>
              <dl className="facts-list compact">
                <Fact label="Approved by">{c.sentBy}</Fact>
                <Fact label="To">{c.recipients.join(", ")}</Fact>
                {c.sendRunId && (
                  <Fact label="Send run">
                    <Link href={`/runs/${encodeURIComponent(c.sendRunId)}`}>{c.sendRunId}</Link>
                  </Fact>
                )}
              </dl>
            </>
          )}
          {c.state === "dismissed" && (
            <dl className="facts-list compact">
              <Fact label="Dismissed by">{c.dismissedBy}</Fact>
              <Fact label="When">{c.dismissedAt ? formatUtc(c.dismissedAt) : "—"}</Fact>
              <Fact label="Why">{c.dismissReason}</Fact>
              <Fact label="Sent">nothing</Fact>
            </dl>
          )}
          {(c.state === "draft" || c.state === "claimed") && !mine && (
            <>
              <dl className="facts-list compact">
                <Fact label="To">{c.recipients.join(", ") || <span className="muted">nobody yet</span>}</Fact>
                <Fact label="Subject">{c.subject}</Fact>
                <Fact label="Message">
                  <span className="body-text">{c.body}</span>
                </Fact>
              </dl>
              {c.state === "claimed" && (
                <p className="held-by" role="status">
                  Held by {c.claimedByName ? `${c.claimedByName} (${c.claimedBy})` : c.claimedBy}
                  {c.claimedAt && ` since ${formatUtc(c.claimedAt)}`}. Only they can edit, send or dismiss it.
                </p>
              )}
              {c.state === "draft" && canHandle && (
                <button type="button" className="button primary" disabled={busy} onClick={() => void claim()}>
                  Claim to edit and send
                </button>
              )}
              {!canHandle && <p className="muted">You can read this correction. Editing, sending and dismissing it need the support role.</p>}
              {note && <p className="form-error">{note}</p>}
            </>
          )}
          {mine && <WorkForm key={c.version} c={c} onChange={refetch} />}
        </section>
      </div>
    </>
  );
}
