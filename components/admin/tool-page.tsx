"use client";

import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { ClassBadge, Fact, StatusBadge, Time } from "@/components/saga-display";
import { DashboardRequestError, errorMessage, postParsed } from "@/components/dashboard/live";
import { ZToolEditResult, type TToolDetail, type TToolRow, type TToolVersion } from "@/lib/server/tools/views";
import { CLASS_MEANINGS, formatWindow, STATUS_MEANINGS, toolFieldLabel, undoSummary } from "./tool-labels";
import styles from "./tools.module.css";
import { DEFAULT_WINDOW_SEC, DURATION_UNITS, durationDraftOf, secondsOfDraft, type DurationDraft, type DurationUnit } from "@/lib/server/tools/duration";
import { dashboardUrl, DashboardPath } from "@/lib/delivery/dashboard-paths";
import { BackLink, FormError } from "@/components/section";
import { Action, rolesThatCan } from "@/lib/server/auth/roles";
import { TOOL_CLASSES } from "@/lib/saga/vocabulary";

/** Roles that can pull revoke triggers at all (lib/server/auth/roles.ts); the row narrows them. */
const REVOKE_ROLES = rolesThatCan(Action.REVOKE_PULL);

/** A stored value as a person reads it. */
function say(field: string, value: unknown): string {
  if (value === null || value === undefined || value === "") return "—";
  if (field === "revocationWindowSec" || field === "keyRetentionSec") return typeof value === "number" ? formatWindow(value) : String(value);
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (Array.isArray(value)) return value.length === 0 ? "nobody" : value.join(", ");
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/** The row as everyone reads it. */
function RowFacts({ tool }: { tool: TToolRow }) {
  return (
    <dl className="facts-list">
      <Fact label="Class">
        <ClassBadge toolClass={tool.toolClass} /> <span className="muted small">{CLASS_MEANINGS[tool.toolClass]}</span>
      </Fact>
      <Fact label="Undo">{undoSummary(tool)}</Fact>
      <Fact label="Compensating tool">{tool.compensator ? <code>{tool.compensator}</code> : "—"}</Fact>
      <Fact label="Lookup by key">{tool.lookupAvailable ? "yes: reconcile can find an effect by its step key" : "no: a timed-out call goes to a person"}</Fact>
      <Fact label="Revocation window">{formatWindow(tool.revocationWindowSec)}</Fact>
      <Fact label="Provider key retention">{formatWindow(tool.keyRetentionSec)}</Fact>
      <Fact label="Owner">{tool.owner ?? "unrouted: its escalations reach nobody's queue in particular"}</Fact>
      <Fact label="External system">{tool.system ?? "not stated: the dashboard guesses it from the tool's name"}</Fact>
      <Fact label="Audience">{tool.audienceWords}</Fact>
      <Fact label="Who may pull it back">{tool.revokeRoles.length > 0 ? tool.revokeRoles.join(", ") : "nobody"}</Fact>
      <Fact label="A reviewer may change">
        {tool.reviewerEditableArgs ? (tool.reviewerEditableArgs.length > 0 ? tool.reviewerEditableArgs.join(", ") : "nothing") : "any argument but a recipient or target; an amount only lower"}
      </Fact>
      <Fact label="Always require approval">{tool.alwaysRequireApproval ? "yes: every call is held for a person" : "no"}</Fact>
      <Fact label="Correction template">
        {tool.correctionSubject ? (
          <>
            <strong>{tool.correctionSubject}</strong>
            <p className={styles.template}>{tool.correctionBody}</p>
          </>
        ) : (
          "—"
        )}
      </Fact>
      <Fact label="Last verified">{tool.verifiedAt ? <><Time at={tool.verifiedAt} /> by {tool.verifiedBy}</> : "never"}</Fact>
      <Fact label="Last change">
        <Time at={tool.updatedAt} /> by {tool.updatedBy ?? "—"}
      </Fact>
    </dl>
  );
}

/** The declaration's suggestion for each field, as the manifest spelt it. */
function declaredValues(declared: Record<string, unknown>): Record<string, unknown> {
  const comp = declared.compensation as { tool?: unknown } | undefined;
  const corr = declared.correction as { subject?: unknown; body?: unknown } | undefined;
  return {
    toolClass: declared.class,
    compensator: comp?.tool ?? null,
    undoMechanism: declared.undoMechanism ?? null,
    owner: declared.owner ?? null,
    revocationWindowSec: declared.revocationWindowSec ?? null,
    keyRetentionSec: declared.keyRetentionSec ?? null,
    audienceRule: Array.isArray(declared.audience) ? declared.audience.join(", ") : null,
    correctionSubject: corr?.subject ?? null,
    correctionBody: corr?.body ?? null,
    description: declared.description ?? null,
  };
}

/** Declared beside accepted: the team's suggestion is never trusted as it is. */
function DeclaredVsAccepted({ detail }: { detail: TToolDetail }) {
  if (!detail.declared) return null;
  const declared = declaredValues(detail.declared);
  const tool = detail.tool as unknown as Record<string, unknown>;
  return (
    <section className="panel" aria-labelledby="declared">
      <h2 id="declared">Declared and accepted</h2>
      <p className="muted small">
        Declared by <strong>{detail.declaredBy}</strong> <Time at={detail.declaredAt} />. A declaration is a suggestion: the row on the right is what agents meet.
        {detail.argsSchemaMissing ? " It declares no argument schema: calls take any JSON." : " Calls are checked against its argument schema."}
      </p>
      <div className="table-wrap">
        <table className={styles.compare}>
          <thead>
            <tr>
              <th>Field</th>
              <th>Declared</th>
              <th>In the table</th>
            </tr>
          </thead>
          <tbody>
            {Object.entries(declared).map(([field, value]) => {
              const accepted = tool[field];
              const differs = say(field, value) !== say(field, accepted);
              return (
                <tr key={field} className={differs ? styles.differs : undefined}>
                  <th scope="row">{toolFieldLabel(field) ?? field}</th>
                  <td>{say(field, value)}</td>
                  <td>{say(field, accepted)}</td>
                </tr>
              );
            })}
            <tr>
              <th scope="row">Lookup by key</th>
              <td>{say("lookup", detail.declared.lookup)}</td>
              <td>{say("lookup", detail.tool.lookupAvailable)}</td>
            </tr>
          </tbody>
        </table>
      </div>
      <details className={styles.raw}>
        <summary>The manifest entry as sent</summary>
        <pre>{JSON.stringify(detail.declared, null, 2)}</pre>
      </details>
    </section>
  );
}

/** One version of the history: who, when, why, and each field from -> to. */
function VersionItem({ v }: { v: TToolVersion }) {
  const changes = Object.entries(v.diff);
  return (
    <li className={styles.version}>
      <div className={styles.versionHead}>
        <strong>Version {v.version}</strong> · {v.change} by {v.changedBy} · <Time at={v.changedAt} />
      </div>
      {v.reason && <p className={styles.reason}>“{v.reason}”</p>}
      {changes.length === 0 ? (
        <p className="muted small">No field changed.</p>
      ) : v.change === "created" || (v.change === "declared" && changes.length > 4) ? (
        <p className="muted small">Entered the table with {changes.length} fields set.</p>
      ) : (
        <ul className={styles.diff}>
          {changes.map(([field, { from, to }]) => (
            <li key={field}>
              <span className={styles.diffField}>{toolFieldLabel(field) ?? field}</span>: <del>{say(field, from)}</del> → <ins>{say(field, to)}</ins>
            </li>
          ))}
        </ul>
      )}
    </li>
  );
}

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

/** The edit form's state: the row's fields as the inputs hold them. */
interface Draft {
  toolClass: string;
  compensator: string;
  undoMechanism: string;
  owner: string;
  system: string;
  window: DurationDraft;
  retention: DurationDraft;
  audienceRule: string;
  reviewerEditableArgs: string;
  revokeRoles: string[];
  alwaysRequireApproval: boolean;
  correctionSubject: string;
  correctionBody: string;
  description: string;
}

function draftOf(tool: TToolRow): Draft {
  return {
    toolClass: tool.toolClass,
    compensator: tool.compensator ?? "",
    undoMechanism: tool.undoMechanism ?? "",
    owner: tool.owner ?? "",
    system: tool.system ?? "",
    window: durationDraftOf(tool.revocationWindowSec),
    retention: durationDraftOf(tool.keyRetentionSec),
    audienceRule: tool.audienceRule ?? "",
    reviewerEditableArgs: tool.reviewerEditableArgs?.join(", ") ?? "",
    revokeRoles: tool.revokeRoles,
    alwaysRequireApproval: tool.alwaysRequireApproval,
    correctionSubject: tool.correctionSubject ?? "",
    correctionBody: tool.correctionBody ?? "",
    description: tool.description ?? "",
  };
}

/** The fields that differ from the row, as the API takes them. */
function changesOf(tool: TToolRow, d: Draft): Record<string, unknown> {
  const next: Record<string, unknown> = {
    toolClass: d.toolClass,
    compensator: d.compensator || null,
    undoMechanism: d.undoMechanism.trim() || null,
    owner: d.owner.trim() || null,
    system: d.system.trim() || null,
    revocationWindowSec: secondsOfDraft(d.window),
    keyRetentionSec: secondsOfDraft(d.retention),
    audienceRule: d.audienceRule.trim() || null,
    reviewerEditableArgs: d.reviewerEditableArgs.trim()
      ? d.reviewerEditableArgs
          .split(",")
          .map((a) => a.trim())
          .filter(Boolean)
      : null,
    revokeRoles: d.revokeRoles,
    alwaysRequireApproval: d.alwaysRequireApproval,
    correctionSubject: d.correctionSubject.trim() || null,
    correctionBody: d.correctionBody.trim() || null,
    description: d.description.trim() || null,
  };
  const current = tool as unknown as Record<string, unknown>;
  return Object.fromEntries(Object.entries(next).filter(([k, v]) => JSON.stringify(v) !== JSON.stringify(current[k] ?? null)));
}

type Outcome = { tone: "bad"; text: string; fields?: Record<string, string> } | null;

/** A field's error from the server, shown under its input. */
function FieldError({ outcome, field }: { outcome: Outcome; field: string }) {
  const message = outcome?.fields?.[field];
  return message ? (
    <p className={styles.fieldError} id={`err-${field}`}>
      {message}
    </p>
  ) : null;
}

/** Saves an edit bound to the version the page loaded; what it said, for the form that asked. */
function useToolSave(tool: TToolRow, onSaved: (text: string) => void) {
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome>(null);
  async function save(body: { changes: Record<string, unknown>; verified?: boolean; reason?: string; acceptWithoutArgsSchema?: boolean }, done: string): Promise<boolean> {
    setBusy(true);
    setOutcome(null);
    try {
      const result = await postParsed(dashboardUrl(DashboardPath.updateTool, { name: tool.name }), ZToolEditResult, { expectedVersion: tool.policyVersion, ...body });
      if (result.ok) {
        onSaved(result.changed.length > 0 ? `${done} Version ${result.tool.policyVersion}: ${result.changed.join(", ")} changed.` : `${done} Version ${result.tool.policyVersion}.`);
        return true;
      }
      setOutcome({ tone: "bad", text: `Not saved: ${result.message}` });
    } catch (e) {
      const fields: Record<string, string> = {};
      if (e instanceof DashboardRequestError) for (const d of e.details) fields[d.path.replace(/^(body\.)?changes\./, "")] = d.message;
      const named = Object.keys(fields).map(toolFieldLabel);
      // Field errors stand beside their inputs; the summary names the fields in words.
      const text =
        named.length > 0 && named.every((label) => label !== null)
          ? `Not saved: ${named.length === 1 ? "one field needs" : `${named.length} fields need`} a change (marked above): ${named.join(", ")}. Nothing was changed.`
          : `Not saved: ${errorMessage(e)}`;
      setOutcome({ tone: "bad", text, fields });
    } finally {
      setBusy(false);
    }
    return false;
  }
  return { busy, outcome, save };
}

/** Accept, disable or enable (admins); a declared tool without an argument schema is accepted only knowingly. */
function StatusActions({ tool, argsSchemaMissing, onSaved }: { tool: TToolRow; argsSchemaMissing: boolean; onSaved: (text: string) => void }) {
  const { busy, outcome, save } = useToolSave(tool, onSaved);
  const [knowingly, setKnowingly] = useState(false);
  const mustAcknowledge = tool.status === "UNREVIEWED" && argsSchemaMissing;
  return (
    <section className="panel" aria-labelledby="status-actions">
      <h2 id="status-actions">Status</h2>
      <p className="small">
        <StatusBadge status={tool.status} /> {STATUS_MEANINGS[tool.status]}
      </p>
      <div className={styles.actions}>
        {tool.status === "UNREVIEWED" && (
          <button
            type="button"
            className="button primary"
            disabled={busy || (mustAcknowledge && !knowingly)}
            onClick={() => void save({ changes: { status: "REVIEWED" }, verified: true, reason: "accepted the declaration", ...(mustAcknowledge ? { acceptWithoutArgsSchema: true } : {}) }, "Accepted.")}
          >
            Accept this tool
          </button>
        )}
        {tool.status !== "DISABLED" ? (
          <button type="button" className="button reject" disabled={busy} onClick={() => void save({ changes: { status: "DISABLED" } }, "Disabled: every new call is refused.")}>
            Disable
          </button>
        ) : (
          <button type="button" className="button" disabled={busy} onClick={() => void save({ changes: { status: "REVIEWED" } }, "Enabled.")}>
            Enable
          </button>
        )}
      </div>
      {mustAcknowledge && (
        <div className="banner bad" role="note">
          <p>
            <strong>No argument schema.</strong> Its team declared {tool.name} without one, so its calls would take any JSON, even a bare string; until it is accepted, every call is held for a person. Ask the team to declare
            one (<code>argsSchema</code> in the manifest), or accept it knowingly.
          </p>
          <label className="small">
            <input type="checkbox" checked={knowingly} onChange={(e) => setKnowingly(e.target.checked)} /> I accept {tool.name} without an argument schema
          </label>
        </div>
      )}
      {tool.status === "UNREVIEWED" && <p className="muted small">Accepting takes the row as it stands; to change a field first, edit it below and save, then accept.</p>}
      <FormError message={outcome?.text} />
    </section>
  );
}

/** The edit form (admins). */
function ToolEditor({ detail, onSaved }: { detail: TToolDetail; onSaved: (text: string) => void }) {
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

/** One tool: its row, what its team declared, the editor (admins) and its history. */
export function ToolPage({ detail }: { detail: TToolDetail }) {
  const router = useRouter();
  const [saved, setSaved] = useState<string | null>(null);
  const tool = detail.tool;
  const onSaved = (text: string) => {
    setSaved(text);
    router.refresh();
  };
  return (
    <>
      <BackLink href="/admin/tools">Tool table</BackLink>
      <div className="page-head">
        <div>
          <h1 className={styles.title}>
            {tool.name} <ClassBadge toolClass={tool.toolClass} /> <StatusBadge status={tool.status} />
          </h1>
          <p className="muted">
            Policy version {tool.policyVersion}
            {tool.namespace ? ` · declared by ${tool.namespace}` : " · registered by a connector this server runs"}
            {tool.description ? ` · ${tool.description}` : ""}
          </p>
        </div>
      </div>
      {saved && (
        <p className={styles.saved} role="status">
          {saved}
        </p>
      )}
      {tool.status === "DISABLED" && <div className="banner bad">Disabled by {tool.disabledBy ?? "an admin"}: agents get a refusal naming them on every new call.</div>}
      {tool.warnings.length > 0 && (
        <ul className={styles.warnings} aria-label="Warnings">
          {tool.warnings.map((w) => (
            <li key={w}>{w}</li>
          ))}
        </ul>
      )}
      <div className={styles.layout}>
        <div className={styles.main}>
          {detail.canEdit && <StatusActions key={`status-${tool.policyVersion}`} tool={tool} argsSchemaMissing={detail.argsSchemaMissing} onSaved={onSaved} />}
          <section className="panel" aria-labelledby="row">
            <h2 id="row">What the table says</h2>
            <RowFacts tool={tool} />
          </section>
          <DeclaredVsAccepted detail={detail} />
          {detail.canEdit ? (
            <ToolEditor key={tool.policyVersion} detail={detail} onSaved={onSaved} />
          ) : (
            <p className="muted">You can read this row. Editing it needs the admin role.</p>
          )}
        </div>
        <section className={`panel ${styles.history}`} aria-labelledby="history">
          <h2 id="history">History</h2>
          {detail.history.length === 0 ? (
            <p className="muted small">No versions recorded: this row predates the history (it was added before versions were kept). The next edit starts it.</p>
          ) : (
            <ol className={styles.versions}>
              {detail.history.map((v) => (
                <VersionItem key={v.version} v={v} />
              ))}
            </ol>
          )}
        </section>
      </div>
    </>
  );
}
