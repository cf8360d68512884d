"use client";

// The admin's form for a tool's row: every field with what it means, the server's errors beside their
// inputs, a reason kept in the history and the check against the connector. Saving makes a new version.

import { useState, type FormEvent } from "react";
import type { TToolDetail } from "@/lib/server/tools/views";
import { CLASS_MEANINGS, formatWindow } from "@/components/admin/tool-labels";
import styles from "@/components/admin/tools.module.css";
import { DEFAULT_WINDOW_SEC, DURATION_UNITS, durationDraftOf, secondsOfDraft, type DurationDraft, type DurationUnit } from "@/lib/server/tools/duration";
import { FormError } from "@/components/section";
import { Action, rolesThatCan } from "@/lib/server/auth/roles";
import { TOOL_CLASSES } from "@/packages/client/src/saga/vocabulary";
import { changesOf, draftOf, type Draft } from "./tool-draft";
import { useToolSave, type Outcome } from "./tool-save";

/** Roles that can pull revoke triggers at all (lib/server/auth/roles.ts); the row narrows them. */
const REVOKE_ROLES = rolesThatCan(Action.REVOKE_PULL);

/** An amount and a unit, for a duration field of the form. */
function DurationField({ id, label, value, onChange, placeholder, describedBy }: { id: string; label: string; value: DurationDraft; onChange: (next: DurationDraft) => void; placeholder: string; describedBy: { "aria-invalid"?: boolean; "aria-describedby"?: string } }) {
  return (
    <>
      <label htmlFor={id}>{label}</label>
      <div className={styles.duration}>
        <input id={id} type="number" min="0" step="any" inputMode="decimal" value={value.amount} onChange={(e) => onChange({ ...value, amount: e.target.value })} placeholder={placeholder} {...describedBy} />
        <select aria-label={`${label}: unit`} value={value.unit} onChange={(e) => onChange({ ...value, unit: e.target.value as DurationUnit })}>
          {DURATION_UNITS.map((u) => (
            <option key={u.unit} value={u.unit}>
              {u.unit}
            </option>
          ))}
        </select>
      </div>
    </>
  );
}

/** A field's error from the server, shown under its input. */
function FieldError({ outcome, field }: { outcome: Outcome; field: string }) {
  const message = outcome?.fields?.[field];
  return message ? (
    <p className={styles.fieldError} id={`err-${field}`}>
      {message}
    </p>
  ) : null;
}

/** The edit form (admins). */
export function ToolEditor({ detail, onSaved }: { detail: TToolDetail; onSaved: (text: string) => void }) {
  const tool = detail.tool;
  const [draft, setDraft] = useState<Draft>(() => draftOf(tool));
  const [reason, setReason] = useState("");
  const [verified, setVerified] = useState(false);
  /** The default window the form filled in when the class changed, in words (shown until saved). */
  const [windowFilled, setWindowFilled] = useState<string | null>(null);
  const { busy, outcome, save } = useToolSave(tool, onSaved);
  const set = <K extends keyof Draft>(key: K, value: Draft[K]) => setDraft((d) => ({ ...d, [key]: value }));
  const changes = changesOf(tool, draft);
  const dirty = Object.keys(changes).length > 0;

  function submit(event: FormEvent) {
    event.preventDefault();
    void save({ changes, verified, reason: reason.trim() || undefined }, "Saved.");
  }


  /** A class that can be pulled back, chosen while the window is empty, gets its default window, shown before saving. */
  function changeClass(toolClass: string) {
    const fallback = DEFAULT_WINDOW_SEC[toolClass as keyof typeof DEFAULT_WINDOW_SEC] ?? null;
    const filled = fallback !== null && secondsOfDraft(draft.window) === null;
    setDraft((d) => ({ ...d, toolClass, ...(filled ? { window: durationDraftOf(fallback) } : {}) }));
    setWindowFilled(filled ? formatWindow(fallback) : null);
  }

  const releasable = draft.toolClass === "REVERSIBLE" || draft.toolClass === "COMPENSATABLE";
  const aria = (field: string) => (outcome?.fields?.[field] ? { "aria-invalid": true, "aria-describedby": `err-${field}` } : {});
  return (
    <>
      <form className={`panel ${styles.editForm}`} aria-labelledby="edit" onSubmit={submit} noValidate>
        <h2 id="edit">Edit this row</h2>
        <p className="muted small">Saving makes version {tool.policyVersion + 1}. Pending pivots and approved plans that name {tool.name} become stale: their next call of it needs a fresh approval.</p>
        <div className={styles.fields}>
          <div className={styles.field}>
            <label htmlFor="f-toolClass">Class</label>
            <select id="f-toolClass" value={draft.toolClass} onChange={(e) => changeClass(e.target.value)} {...aria("toolClass")}>
              {TOOL_CLASSES.map((c) => (
                <option key={c} value={c}>
                  {c}
                </option>
              ))}
            </select>
            <small className="muted">{CLASS_MEANINGS[draft.toolClass]}</small>
            <FieldError outcome={outcome} field="toolClass" />
          </div>
          <div className={styles.field}>
            <label htmlFor="f-compensator">Compensating tool</label>
            <select id="f-compensator" value={draft.compensator} onChange={(e) => set("compensator", e.target.value)} disabled={!releasable && !draft.compensator} {...aria("compensator")}>
              <option value="">none</option>
              {detail.compensators.map((c) => (
                <option key={c} value={c}>
                  {c}
                </option>
              ))}
            </select>
            <small className="muted">{releasable ? "Required: the counter-action the worker runs under its own key." : "Only reversible and compensatable tools have one."}</small>
            <FieldError outcome={outcome} field="compensator" />
          </div>
          <div className={styles.field}>
            <label htmlFor="f-owner">Owner (team)</label>
            <input id="f-owner" value={draft.owner} onChange={(e) => set("owner", e.target.value)} placeholder="payments-team" {...aria("owner")} />
            <FieldError outcome={outcome} field="owner" />
          </div>
          <div className={styles.field}>
            <label htmlFor="f-system">External system</label>
            <input id="f-system" value={draft.system} onChange={(e) => set("system", e.target.value)} placeholder="payments" {...aria("system")} />
            <small className="muted">Where its effects live: a pivot groups staged effects by it.</small>
            <FieldError outcome={outcome} field="system" />
          </div>
          <div className={styles.field}>
            <DurationField id="f-revocationWindowSec" label="Revocation window" value={draft.window} onChange={(next) => set("window", next)} placeholder="none" describedBy={aria("revocationWindowSec")} />
            {windowFilled && <small className="muted">Filled with the class&apos;s default ({windowFilled}): without one, every pull-back would be outside the window. Change or clear it before saving.</small>}
            <FieldError outcome={outcome} field="revocationWindowSec" />
          </div>
          <div className={styles.field}>
            <DurationField id="f-keyRetentionSec" label="Provider key retention" value={draft.retention} onChange={(next) => set("retention", next)} placeholder="unknown" describedBy={aria("keyRetentionSec")} />
            <small className="muted">How long the provider remembers idempotency keys (24 h for many payment APIs).</small>
            <FieldError outcome={outcome} field="keyRetentionSec" />
          </div>
          <div className={styles.field}>
            <label htmlFor="f-audienceRule">Audience</label>
            <input id="f-audienceRule" value={draft.audienceRule} onChange={(e) => set("audienceRule", e.target.value)} placeholder="customer, finance" {...aria("audienceRule")} />
            <small className="muted">
              Who can see the effect: a list (<code>finance, support_team</code>) or a recipient rule (<code>customer if to is outside the company&apos;s domains, else internal</code>). Now: {detail.tool.audienceWords}. Left empty, every effect counts as customer-facing.
            </small>
            <FieldError outcome={outcome} field="audienceRule" />
          </div>
          <div className={styles.field}>
            <label htmlFor="f-reviewerEditableArgs">What a reviewer may change before approving</label>
            <input id="f-reviewerEditableArgs" value={draft.reviewerEditableArgs} onChange={(e) => set("reviewerEditableArgs", e.target.value)} placeholder="subject, body" {...aria("reviewerEditableArgs")} />
            <small className="muted">Argument names, comma-separated. Left empty: any argument but a recipient or target (to, cc, an id); an amount only ever lower.</small>
            <FieldError outcome={outcome} field="reviewerEditableArgs" />
          </div>
        </div>
        <div className={styles.field}>
          <label htmlFor="f-undoMechanism">Undo mechanism, in words</label>
          <input id="f-undoMechanism" value={draft.undoMechanism} onChange={(e) => set("undoMechanism", e.target.value)} placeholder="Refund the charge; the customer sees a refund line" {...aria("undoMechanism")} />
          <FieldError outcome={outcome} field="undoMechanism" />
        </div>
        <fieldset className={styles.fieldset}>
          <legend>Who may pull it back</legend>
          {REVOKE_ROLES.map((role) => (
            <label key={role} className={styles.check}>
              <input
                type="checkbox"
                checked={draft.revokeRoles.includes(role)}
                onChange={(e) => set("revokeRoles", e.target.checked ? [...draft.revokeRoles, role] : draft.revokeRoles.filter((r) => r !== role))}
              />
              {role}
            </label>
          ))}
          <FieldError outcome={outcome} field="revokeRoles" />
        </fieldset>
        <label className={styles.check}>
          <input type="checkbox" checked={draft.alwaysRequireApproval} onChange={(e) => set("alwaysRequireApproval", e.target.checked)} />
          Always require approval: hold every call for a person, whatever the class
        </label>
        <label className={styles.check}>
          <input type="checkbox" checked={draft.twoApprovers} onChange={(e) => set("twoApprovers", e.target.checked)} />
          Two approvers: a pivot whose plan holds this tool needs two different people&rsquo;s approvals
        </label>
        <div className={styles.field}>
          <label htmlFor="f-correctionSubject">Correction subject {draft.toolClass === "IRREVERSIBLE" && <em className="muted">(required for irreversible tools)</em>}</label>
          <input id="f-correctionSubject" value={draft.correctionSubject} onChange={(e) => set("correctionSubject", e.target.value)} placeholder="Correction: {{subject}}" {...aria("correctionSubject")} />
          <FieldError outcome={outcome} field="correctionSubject" />
        </div>
        <div className={styles.field}>
          <label htmlFor="f-correctionBody">Correction body</label>
          <textarea id="f-correctionBody" rows={3} value={draft.correctionBody} onChange={(e) => set("correctionBody", e.target.value)} placeholder="Please disregard our earlier message about {{subject}}…" {...aria("correctionBody")} />
          <small className="muted">{"{{arg}}"} placeholders are filled from the call's arguments when a correction is drafted.</small>
          <FieldError outcome={outcome} field="correctionBody" />
        </div>
        <div className={styles.field}>
          <label htmlFor="f-description">Description</label>
          <input id="f-description" value={draft.description} onChange={(e) => set("description", e.target.value)} {...aria("description")} />
        </div>
        <div className={styles.field}>
          <label htmlFor="f-reason">Why (kept in the history)</label>
          <input id="f-reason" value={reason} onChange={(e) => setReason(e.target.value)} placeholder="e.g. the provider now keeps keys for 24 h only" />
        </div>
        <label className={styles.check}>
          <input type="checkbox" checked={verified} onChange={(e) => setVerified(e.target.checked)} />I checked this row against the connector
        </label>
        <div className={styles.actions}>
          <button type="submit" className="button primary" disabled={busy || (!dirty && !verified)}>
            {busy ? "Saving…" : dirty ? `Save ${Object.keys(changes).length === 1 ? "1 change" : `${Object.keys(changes).length} changes`}` : verified ? "Record the check" : "No changes"}
          </button>
          {dirty && (
            <button type="button" className="button" disabled={busy} onClick={() => setDraft(draftOf(tool))}>
              Undo my changes
            </button>
          )}
        </div>
        <FormError message={outcome?.text} />
      </form>
    </>
  );
}
