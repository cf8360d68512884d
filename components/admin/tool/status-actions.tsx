"use client";

// A tool's review status and the admin's buttons for it: accept a declared tool (knowingly, when it
// has no argument schema), disable it, enable it again.

import { useState } from "react";
import { StatusBadge } from "@/components/saga-display";
import type { TToolRow } from "@/lib/server/tools/views";
import { STATUS_MEANINGS } from "@/components/admin/tool-labels";
import styles from "@/components/admin/tools.module.css";
import { FormError } from "@/components/section";
import { useToolSave } from "./tool-save";

/** Accept, disable or enable (admins); a declared tool without an argument schema is accepted only knowingly. */
export function StatusActions({ tool, argsSchemaMissing, onSaved }: { tool: TToolRow; argsSchemaMissing: boolean; onSaved: (text: string) => void }) {
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
      {tool.status === "UNREVIEWED" && (
        <p className="muted small">
          {tool.proposalWaiting
            ? "Accepting takes its team's proposal (shown below) as the row. To accept the row as it stands instead, refuse the proposal first; to change a field, edit it below and save, then accept."
            : "Accepting takes the row as it stands; to change a field first, edit it below and save, then accept."}
        </p>
      )}
      <FormError message={outcome?.text} />
    </section>
  );
}
