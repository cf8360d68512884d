"use client";

// A team's proposed change beside the row in force, field by field, with the admin's accept and
// refuse: a declaration never changes a reviewed row on its own. The manifest entry as sent is one
// click away.

import { useState } from "react";
import { Time } from "@/components/saga-display";
import { postParsed, DashboardRequestError, errorMessage } from "@/components/dashboard/live";
import { FormError } from "@/components/section";
import { dashboardUrl, DashboardPath } from "@/lib/delivery/dashboard-paths";
import { ZToolEditResult, type TToolDetail } from "@/lib/server/tools/views";
import { storedValueInWords } from "@/components/admin/tool-labels";
import styles from "@/components/admin/tools.module.css";

/** Accept or refuse the proposal, bound to the version the page loaded. */
function ProposalActions({ detail, onSaved }: { detail: TToolDetail; onSaved: (text: string) => void }) {
  const [busy, setBusy] = useState(false);
  const [reason, setReason] = useState("");
  const [error, setError] = useState<string | null>(null);
  const tool = detail.tool;
  // An unreviewed tool is accepted with its proposal by "Accept this tool" (the Status panel): one button for one decision.
  const reviewing = tool.status === "UNREVIEWED";
  async function decide(decision: "accept" | "refuse") {
    setBusy(true);
    setError(null);
    try {
      const body = { expectedVersion: tool.policyVersion, decision, ...(reason.trim() ? { reason: reason.trim() } : {}) };
      const result = await postParsed(dashboardUrl(DashboardPath.decideToolProposal, { name: tool.name }), ZToolEditResult, body);
      if (!result.ok) return setError(`Not decided: ${result.message}`);
      onSaved(decision === "accept" ? `Accepted: the row takes the proposal. Version ${result.tool.policyVersion}${result.changed.length > 0 ? `: ${result.changed.join(", ")} changed` : ""}.` : "Refused: the row stays as it was, and the team's proposal is dropped.");
    } catch (e) {
      setError(`Not decided: ${e instanceof DashboardRequestError && e.details.length > 0 ? e.details.map((d) => d.message).join(" ") : errorMessage(e)}`);
    } finally {
      setBusy(false);
    }
  }
  return (
    <div className={styles.proposalActions}>
      <label className="small">
        Why (kept in the history)
        <input type="text" value={reason} maxLength={500} onChange={(e) => setReason(e.target.value)} placeholder="e.g. checked with the team: the tool only reads" />
      </label>
      <div className={styles.actions}>
        {!reviewing && (
          <button type="button" className="button primary" disabled={busy} onClick={() => void decide("accept")}>
            Accept the proposal
          </button>
        )}
        <button type="button" className="button reject" disabled={busy} onClick={() => void decide("refuse")}>
          Refuse it
        </button>
      </div>
      {reviewing && <p className="muted small">“Accept this tool” above takes this proposal as the row. Refuse it to accept the row as it stands instead.</p>}
      <FormError message={error ?? undefined} />
    </div>
  );
}

/** The team's proposal beside the row in force (accept and refuse for admins), and the declaration as sent. */
export function DeclaredVsAccepted({ detail, onSaved }: { detail: TToolDetail; onSaved: (text: string) => void }) {
  const proposal = detail.proposal;
  if (!detail.declared && !proposal) return null;
  const lowering = proposal?.changes.filter((c) => c.lowersControl) ?? [];
  return (
    <section className="panel" aria-labelledby="declared">
      <h2 id="declared">{proposal ? "Change proposed by its team" : "What its team declared"}</h2>
      {proposal ? (
        <>
          <p className="small">
            <strong>{proposal.proposedBy ?? "Its team"}</strong> proposed {proposal.changes.length === 1 ? "one change" : `${proposal.changes.length} changes`} <Time at={proposal.proposedAt} />. Agents meet the row in force until an admin accepts;
            {detail.tool.status === "UNREVIEWED" ? " until then every call is held and treated as irreversible." : " the reviewed row stands exactly as it is."}
          </p>
          {lowering.length > 0 && (
            <p className="banner bad" role="note">
              Accepting would lower {lowering.length === 1 ? "a control" : `${lowering.length} controls`}: {lowering.map((c) => c.label).join(", ")}. Check with the team that the tool really works that way.
            </p>
          )}
          <div className="table-wrap">
            <table className={styles.compare}>
              <thead>
                <tr>
                  <th>Field</th>
                  <th>In force</th>
                  <th>Proposed</th>
                </tr>
              </thead>
              <tbody>
                {proposal.changes.map((c) => (
                  <tr key={c.field} className={styles.differs}>
                    <th scope="row">
                      {c.label.charAt(0).toUpperCase() + c.label.slice(1)}
                      {c.lowersControl && <div className="cell-label attention">lowers a control</div>}
                    </th>
                    <td>{storedValueInWords(c.field, c.inForce)}</td>
                    <td>{storedValueInWords(c.field, c.proposed)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {detail.canEdit ? <ProposalActions detail={detail} onSaved={onSaved} /> : <p className="muted small">An admin accepts or refuses it.</p>}
        </>
      ) : (
        <p className="muted small">
          Declared by <strong>{detail.declaredBy}</strong> <Time at={detail.declaredAt} />. Its latest declaration proposes nothing that differs from the row.
        </p>
      )}
      <p className="muted small">{detail.argsSchemaMissing ? "It declares no argument schema: calls take any JSON." : "Calls are checked against the argument schema it declared."}</p>
      {detail.declared && (
        <details className={styles.raw}>
          <summary>The manifest entry as sent</summary>
          <pre>{JSON.stringify(detail.declared, null, 2)}</pre>
        </details>
      )}
    </section>
  );
}
