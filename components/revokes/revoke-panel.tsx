"use client";

import Link from "@/components/link";
import { useState, type FormEvent } from "react";
import { ClassBadge, Countdown, formatDuration, StatusBadge, Time } from "@/components/saga-display";
import { errorMessage, postParsed, useLive } from "@/components/dashboard/live";
import { ZPullResult, ZRevokeOptions, type TRevokeOption, type TRevokeOptions, type TRevokeSummary } from "@/lib/desks/revokes/views";
import styles from "./revokes.module.css";
import { dashboardUrl, DashboardPath } from "@/lib/delivery/dashboard-paths";
import { FormError } from "@/components/section";

/** How a pulled revoke stands, in a badge people read. */
export function OutcomeBadge({ revoke }: { revoke: TRevokeSummary }) {
  const tone = revoke.outcome === "confirmed" || revoke.outcome === "done" || revoke.outcome === "correction_sent" ? "good" : revoke.outcome === "failed" ? "bad" : revoke.outcome === "correction_dismissed" ? "done" : "pending";
  return <span className={`badge status-${tone}`}>{revoke.outcome.replaceAll("_", " ")}</span>;
}

/** Who pulled it, when and why, and how it ended. */
function PulledBy({ revoke }: { revoke: TRevokeSummary }) {
  return (
    <div className={styles.pulled}>
      <OutcomeBadge revoke={revoke} /> {revoke.kind === "OUT_OF_WINDOW" ? "Asked to pull back, past the window, by" : "Pulled back by"} <strong>{revoke.requestedBy}</strong> ({revoke.role}) <Time at={revoke.requestedAt} />: “{revoke.reason}”.
      <div className="muted small">
        {revoke.outcomeText}
        {revoke.escalationId && (
          <>
            {" "}
            <Link href={`/escalations/${encodeURIComponent(revoke.escalationId)}`}>Open the escalation</Link>
          </>
        )}
        {revoke.correctionId && " The correction is on the support desk."}
      </div>
    </div>
  );
}

/** The confirmation: what will happen, a required reason, and the one button that does it. */
function ConfirmPull({ title, sentence, button, onPull, onCancel }: { title: string; sentence: string; button: string; onPull: (reason: string) => Promise<void>; onCancel: () => void }) {
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  async function submit(event: FormEvent) {
    event.preventDefault();
    if (!reason.trim()) {
      setError("Say why: the reason goes into the record and to whoever handles it.");
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await onPull(reason.trim());
    } catch (e) {
      setError(errorMessage(e));
      setBusy(false);
    }
  }
  return (
    <form className={styles.confirm} onSubmit={submit} aria-label={title}>
      <strong>{title}</strong>
      <p>{sentence}</p>
      <label htmlFor="revoke-reason">Why (required)</label>
      <textarea id="revoke-reason" rows={2} value={reason} onChange={(e) => setReason(e.target.value)} placeholder="e.g. the agent charged the wrong customer" />
      <FormError message={error} />
      <div className={styles.actions}>
        <button type="submit" className="button reject" disabled={busy}>
          {busy ? "Pulling back…" : button}
        </button>
        <button type="button" className="button" onClick={onCancel} disabled={busy}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function StepRow({ option, now, canPull, open, pulling, setOpen, pull }: { option: TRevokeOption; now: string; canPull: boolean; open: boolean; pulling: boolean; setOpen: (open: boolean) => void; pull: (reason: string) => Promise<void> }) {
  const late = option.state === "out_of_window";
  return (
    <li className={styles.step}>
      <div className={styles.stepHead}>
        <span className="muted">#{option.stepIdx}</span> <code>{option.tool}</code> <ClassBadge toolClass={option.toolClass} /> <StatusBadge status={option.status} />
        {option.externalRef && <span className="muted small"> {option.externalRef}</span>}
      </div>
      {option.revoke ? (
        <>
          <PulledBy revoke={option.revoke} />
          {open && !pulling && (
            <p className="small" role="status">
              {option.revoke.requestedBy} pulled this back while your confirmation was open, so yours was not sent: one pull per step is recorded.{" "}
              <button type="button" className="button small" onClick={() => setOpen(false)}>
                Close
              </button>
            </p>
          )}
        </>
      ) : (
        <div className={styles.stepBody}>
          <span className="small">
            {option.windowEndsAt && Date.parse(option.windowEndsAt) <= Date.parse(now) ? (
              <>
                Window closed <span className="countdown passed">{formatDuration((Date.parse(now) - Date.parse(option.windowEndsAt)) / 1000)} ago</span>
              </>
            ) : option.windowEndsAt ? (
              <>
                Window closes <Countdown until={option.windowEndsAt} now={now} />
              </>
            ) : option.toolClass === "IRREVERSIBLE" ? (
              "A correction can be drafted at any time."
            ) : (
              "This tool has no revocation window."
            )}
          </span>
          {option.state === "not_permitted" && <span className="muted small">Only {option.allowedRoles.join(" or ") || "nobody"} may pull it back (the tool table says so).</span>}
          {canPull && (option.state === "pullable" || late) && !open && (
            <button type="button" className={late ? "button small" : "button small reject"} onClick={() => setOpen(true)}>
              {late ? "Escalate…" : "Pull back…"}
            </button>
          )}
        </div>
      )}
      {open && !option.revoke && (
        <ConfirmPull
          title={late ? `Escalate: pull back ${option.tool} past its window` : `Pull back ${option.tool} (step ${option.stepIdx})`}
          sentence={option.whatHappens}
          button={late ? "Open the escalation" : `Pull back ${option.tool}`}
          onPull={pull}
          onCancel={() => setOpen(false)}
        />
      )}
    </li>
  );
}

/** The revoke trigger on a run: every confirmed step with its window left, and the whole run. Live. */
export function RevokePanel({ initial }: { initial: TRevokeOptions }) {
  const runId = initial.runId;
  const { data, refetch } = useLive<TRevokeOptions>(["revokes", runId], dashboardUrl(DashboardPath.getRevokeOptions, { runId }), initial, ZRevokeOptions);
  const [open, setOpen] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  // While this person's own pull is on its way, a refresh that already shows it is not someone else's.
  const [pulling, setPulling] = useState(false);
  const pullable = data.steps.filter((s) => s.state === "pullable" || s.state === "out_of_window").length;

  async function pull(url: string, reason: string) {
    setPulling(true);
    try {
      const result = await postParsed(url, ZPullResult, { reason });
      setMessage(result.message);
      setOpen(null);
    } finally {
      setPulling(false);
    }
    await refetch();
  }

  return (
    <section className={`panel ${styles.panel}`} aria-labelledby="revoke-title">
      <div className={styles.head}>
        <h2 id="revoke-title">Pull back</h2>
        {data.canPull && !data.runRevoke && pullable > 0 && open !== "run" && (
          <button type="button" className="button small reject" onClick={() => setOpen("run")}>
            Pull back the whole run…
          </button>
        )}
      </div>
      <p className="muted small">
        An action that succeeded and was wrong can be pulled back within its tool's revocation window (judged by the database clock). Each pull is recorded with who, when and why.
        {!data.canPull && " Pulling back needs the reviewer or admin role; you can read what was pulled."}
      </p>
      {message && (
        <p className={styles.message} role="status">
          {message}
        </p>
      )}
      {data.runRevoke && <PulledBy revoke={data.runRevoke} />}
      {open === "run" && (
        <ConfirmPull
          title="Pull back the whole run"
          sentence={`The agent is stopped (its next call is refused), then every step is undone last first, each by its own window: ${data.steps
            .filter((s) => !s.revoke)
            .map((s) => `#${s.stepIdx} ${s.tool} ${s.state === "out_of_window" ? "(past its window: escalated instead)" : s.toolClass === "IRREVERSIBLE" ? "(a correction is drafted)" : "(compensated)"}`)
            .join(", ")}.`}
          button="Pull back the whole run"
          onPull={(reason) => pull(dashboardUrl(DashboardPath.pullRunRevoke, { runId }), reason)}
          onCancel={() => setOpen(null)}
        />
      )}
      {data.steps.length === 0 ? (
        <p className="muted">Nothing to pull back: the run has no confirmed effects.</p>
      ) : (
        <ol className={styles.steps}>
          {data.steps.map((option) => (
            <StepRow
              key={option.stepId}
              option={option}
              now={data.now}
              canPull={data.canPull}
              open={open === option.stepId}
              pulling={pulling}
              setOpen={(o) => setOpen(o ? option.stepId : null)}
              pull={(reason) => pull(dashboardUrl(DashboardPath.pullStepRevoke, { stepId: option.stepId }), reason)}
            />
          ))}
        </ol>
      )}
      <p className="small">
        <Link href={`/revokes`}>All revoke records →</Link>
      </p>
    </section>
  );
}
