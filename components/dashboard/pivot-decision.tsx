"use client";

// The pivot screen's deliberate steps: the confirmation that names what an approval cannot take
// back, the editor of a plan item's arguments, and the record of reviewers' edits.

import { useEffect, useRef, useState, type FormEvent } from "react";
import { LabelledValues, Time } from "@/components/saga-display";
import { fieldInWords, moneyInWords } from "@/lib/desks/audit/event-words";
import type { TPivotSummary, TPlanItemView } from "@/lib/desks/pivots/views";
import { audienceInWords } from "./labels";
import { callInWords } from "@/lib/desks/pivots/call-in-words";
import styles from "./reviewer.module.css";
import { FormError } from "@/components/section";

/** Plan items nobody can take back once they ran: irreversible calls, and calls with no undo. */
export function mustConfirm(plan: readonly TPlanItemView[]): TPlanItemView[] {
  return plan.filter((i) => i.toolClass === "IRREVERSIBLE" || (i.toolClass !== "REVERSIBLE" && i.answeredBy === null));
}

/** What the confirmation names of a call nobody can take back: the call, and who sees it. */
export type ConfirmItem = Pick<TPlanItemView, "idx" | "tool" | "args" | "audience" | "audienceSource">;

/**
 * The second step of approving a plan that holds something nobody can take back: a modal dialog
 * naming each such call and who sees it. Enter (the focused Approve button) confirms, Esc cancels.
 */
export function ApprovalConfirmation({ open, items, busy, onConfirm, onCancel }: { open: boolean; items: ConfirmItem[]; busy: boolean; onConfirm: () => void; onCancel: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const confirmRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) {
      dialog.showModal();
      confirmRef.current?.focus();
    }
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return (
    <dialog ref={ref} className={styles.confirm} aria-labelledby="confirm-title" aria-describedby="confirm-what" onCancel={onCancel} onClose={() => open && onCancel()}>
      <h2 id="confirm-title">Approve {items.length === 1 ? "a call" : `${items.length} calls`} that cannot be taken back?</h2>
      <p id="confirm-what">Once the agent makes {items.length === 1 ? "it" : "them"}, nothing undoes {items.length === 1 ? "it" : "them"}; only a correction message sent by a person can answer {items.length === 1 ? "it" : "them"}.</p>
      <ul className={styles.confirmList}>
        {items.map((item) => (
          <li key={item.idx}>
            <strong>{callInWords(item)}</strong>
            <span className="muted small"> · seen by {audienceInWords(item.audience, item.audienceSource)}</span>
          </li>
        ))}
      </ul>
      <div className={styles.confirmButtons}>
        <button ref={confirmRef} type="button" className="button approve" disabled={busy} onClick={onConfirm}>
          {busy ? "Approving…" : "Approve and let them run"}
        </button>
        <button type="button" className="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
      <p className="kbd-hint">
        <kbd>Enter</kbd> approves · <kbd>Esc</kbd> cancels
      </p>
    </dialog>
  );
}

/** Keys holding money in minor units: edited in major units (18.00), stored in minor (1800). */
const AMOUNT_KEYS = new Set(["amount", "amountRefunded", "refundAmount"]);

type FieldValue = { kind: "text"; value: string; long: boolean } | { kind: "money"; value: string } | { kind: "number"; value: string } | { kind: "bool"; value: boolean } | { kind: "json"; value: string };

function fieldOf(key: string, value: unknown): FieldValue {
  if (typeof value === "string") return { kind: "text", value, long: key === "body" || value.length > 60 };
  if (typeof value === "number" && AMOUNT_KEYS.has(key)) return { kind: "money", value: (value / 100).toFixed(2) };
  if (typeof value === "number") return { kind: "number", value: String(value) };
  if (typeof value === "boolean") return { kind: "bool", value };
  return { kind: "json", value: JSON.stringify(value, null, 2) };
}

/** The form's fields back to arguments; a field that does not read is named. */
function argsOf(fields: [string, FieldValue][]): { args: Record<string, unknown> } | { error: string } {
  const args: Record<string, unknown> = {};
  for (const [key, f] of fields) {
    if (f.kind === "text") args[key] = f.value;
    else if (f.kind === "bool") args[key] = f.value;
    else if (f.kind === "money") {
      const n = Number(f.value.replace(",", "."));
      if (!Number.isFinite(n) || !/^\d+([.,]\d{1,2})?$/.test(f.value.trim())) return { error: `${fieldInWords(key)}: write an amount like 18.00` };
      args[key] = Math.round(n * 100);
    } else if (f.kind === "number") {
      const n = Number(f.value);
      if (!Number.isFinite(n)) return { error: `${fieldInWords(key)}: write a number` };
      args[key] = n;
    } else {
      try {
        args[key] = JSON.parse(f.value);
      } catch {
        return { error: `${fieldInWords(key)}: this is not valid JSON` };
      }
    }
  }
  return { args };
}

/** Edits one plan item's arguments, field by field; the server checks them with the tool's own schema. */
export function PlanItemEditor({ item, onCancel, onSave }: { item: TPlanItemView; onCancel: () => void; onSave: (args: Record<string, unknown>, note: string) => Promise<string | null> }) {
  const initial = item.args !== null && typeof item.args === "object" && !Array.isArray(item.args) ? Object.entries(item.args) : [];
  const [fields, setFields] = useState<[string, FieldValue][]>(initial.map(([k, v]) => [k, fieldOf(k, v)]));
  const [note, setNote] = useState("");
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const currency = initial.find(([k]) => k === "currency")?.[1];
  const set = (i: number, value: FieldValue) => setFields((all) => all.map((entry, j) => (j === i ? [entry[0], value] : entry)));

  async function submit(event: FormEvent) {
    event.preventDefault();
    const parsed = argsOf(fields);
    if ("error" in parsed) {
      setFailure(parsed.error);
      return;
    }
    setBusy(true);
    setFailure(null);
    const problem = await onSave(parsed.args, note);
    setBusy(false);
    if (problem) setFailure(problem);
  }

  return (
    <form className={styles.editor} onSubmit={(e) => void submit(e)} aria-labelledby="edit-title" onKeyDown={(e) => e.key === "Escape" && onCancel()}>
      <h3 id="edit-title">
        Edit call {item.idx + 1}: <code>{item.tool}</code>
      </h3>
      <p className="muted small">The plan becomes the edited plan: its hash changes, the change is recorded, and the agent may make only the edited call. An amount may be lowered, not raised.</p>
      {fields.map(([key, f], i) => {
        const id = `edit-${item.idx}-${key}`;
        const words = fieldInWords(key);
        const name = words.charAt(0).toUpperCase() + words.slice(1);
        const label = f.kind === "money" && typeof currency === "string" ? `${name} (${currency.toUpperCase()})` : name;
        // Who or what the call acts on is the agent's proposal; a different one is a new call to reject for.
        if (item.lockedArgs.includes(key)) {
          return (
            <div key={key} className={styles.editField}>
              <label htmlFor={id}>{label}</label>
              <input id={id} value={f.kind === "bool" ? String(f.value) : f.value} readOnly aria-describedby={`${id}-locked`} />
              <small id={`${id}-locked`} className="muted">
                Not yours to change: it says who or what the call acts on. To send it elsewhere, reject and ask the agent to propose again.
              </small>
            </div>
          );
        }
        return (
          <div key={key} className={styles.editField}>
            {f.kind === "bool" ? (
              <label className="choice" htmlFor={id}>
                <input id={id} type="checkbox" checked={f.value} onChange={(e) => set(i, { kind: "bool", value: e.target.checked })} /> {label}
              </label>
            ) : (
              <>
                <label htmlFor={id}>{f.kind === "json" ? `${label} (JSON)` : label}</label>
                {f.kind === "text" && f.long ? (
                  <textarea id={id} rows={4} value={f.value} onChange={(e) => set(i, { ...f, value: e.target.value })} />
                ) : f.kind === "json" ? (
                  <textarea id={id} rows={4} className="mono" value={f.value} onChange={(e) => set(i, { kind: "json", value: e.target.value })} />
                ) : (
                  <input id={id} inputMode={f.kind === "text" ? undefined : "decimal"} value={f.value} onChange={(e) => set(i, { ...f, value: e.target.value } as FieldValue)} />
                )}
              </>
            )}
          </div>
        );
      })}
      <div className={styles.editField}>
        <label htmlFor={`edit-${item.idx}-note`}>Why (the agent and the audit log read it)</label>
        <input id={`edit-${item.idx}-note`} value={note} onChange={(e) => setNote(e.target.value)} placeholder="e.g. The customer's order ships Tuesday, not Monday." />
      </div>
      <div className={styles.confirmButtons}>
        <button type="submit" className="button primary" disabled={busy}>
          {busy ? "Saving…" : "Save the edit"}
        </button>
        <button type="button" className="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
      <FormError message={failure} />
    </form>
  );
}

/** What changed between two argument objects, field by field. */
function changedFields(before: unknown, after: unknown): { key: string; before: unknown; after: unknown }[] {
  const b = before !== null && typeof before === "object" && !Array.isArray(before) ? (before as Record<string, unknown>) : {};
  const a = after !== null && typeof after === "object" && !Array.isArray(after) ? (after as Record<string, unknown>) : {};
  return [...new Set([...Object.keys(b), ...Object.keys(a)])]
    .filter((k) => JSON.stringify(b[k]) !== JSON.stringify(a[k]))
    .map((key) => ({ key, before: b[key], after: a[key] }));
}

/** A value of one changed field in words. */
function fieldValue(key: string, value: unknown, currency: unknown): string {
  if (value === undefined) return "(none)";
  if (typeof value === "number" && AMOUNT_KEYS.has(key)) return moneyInWords(value, typeof currency === "string" ? currency : null);
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** The reviewers' edits of this plan, oldest first, each with what changed. */
export function EditHistory({ edits }: { edits: TPivotSummary["edits"] }) {
  if (edits.length === 0) return null;
  return (
    <section className={styles.edits} aria-labelledby="edits-title" data-testid="edit-history">
      <h3 id="edits-title">Edited by reviewers before the decision</h3>
      <ol>
        {edits.map((edit, i) => {
          const currency = (edit.argsAfter as Record<string, unknown> | null)?.currency;
          return (
            <li key={i}>
              <p>
                <strong>{edit.editedBy}</strong> edited call {edit.itemIdx + 1} (<code>{edit.tool}</code>) at <Time at={edit.editedAt} /> UTC{edit.note ? `: ${edit.note}` : "."}
              </p>
              <table className={styles.diff}>
                <thead>
                  <tr>
                    <th>Field</th>
                    <th>Was</th>
                    <th>Now</th>
                  </tr>
                </thead>
                <tbody>
                  {changedFields(edit.argsBefore, edit.argsAfter).map((c) => (
                    <tr key={c.key}>
                      <th scope="row">{fieldInWords(c.key)}</th>
                      <td className={styles.was}>{fieldValue(c.key, c.before, currency)}</td>
                      <td className={styles.now}>{fieldValue(c.key, c.after, currency)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <details className="raw-inline">
                <summary>Raw arguments before and after</summary>
                <LabelledValues value={{ before: edit.argsBefore, after: edit.argsAfter, planHashBefore: edit.planHashBefore, planHashAfter: edit.planHashAfter }} />
              </details>
            </li>
          );
        })}
      </ol>
    </section>
  );
}
