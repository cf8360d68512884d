// What the tool table's row says, as everyone reads it: class, undo, lookup, windows, owner, system,
// audience, who may pull it back, what a reviewer may change, personal data, retention, approval,
// correction template, checks.

import { ClassBadge, Fact, formatDuration, Time } from "@/components/saga-display";
import type { TToolRow } from "@/lib/server/tools/views";
import Link from "@/components/link";
import { CLASS_MEANINGS, formatWindow, storedValueInWords, undoSummary } from "@/components/admin/tool-labels";
import styles from "@/components/admin/tools.module.css";

/** The row as everyone reads it. */
export function RowFacts({ tool }: { tool: TToolRow }) {
  return (
    <dl className="facts-list">
      <Fact label="Class">
        <ClassBadge toolClass={tool.toolClass} /> <span className="muted small">{CLASS_MEANINGS[tool.toolClass]}</span>
      </Fact>
      <Fact label="Undo">{undoSummary(tool)}</Fact>
      <Fact label="Compensating tool">{tool.compensator ? <code>{tool.compensator}</code> : "—"}</Fact>
      {tool.compensator && (
        <Fact label="Its arguments">
          {tool.compensationArgs ? storedValueInWords("compensationArgs", tool.compensationArgs) : "none written here: the agent sends them with each call"}
        </Fact>
      )}
      <Fact label="Lookup by key">{tool.lookupAvailable ? "yes: reconcile can find an effect by its step key" : "no: a timed-out call goes to a person"}</Fact>
      <Fact label="Revocation window">{formatWindow(tool.revocationWindowSec)}</Fact>
      <Fact label="Provider key retention">{formatWindow(tool.keyRetentionSec)}</Fact>
      <Fact label="Owner">{tool.owner ?? "unrouted: its escalations reach nobody's queue in particular"}</Fact>
      <Fact label="External system">{tool.system ?? "not stated: its effects are grouped under “other” until it is named below"}</Fact>
      <Fact label="Audience">{tool.audienceWords}</Fact>
      <Fact label="Who may pull it back">{tool.revokeRoles.length > 0 ? tool.revokeRoles.join(", ") : "nobody"}</Fact>
      <Fact label="A reviewer may change">
        {tool.reviewerEditableArgs ? (tool.reviewerEditableArgs.length > 0 ? tool.reviewerEditableArgs.join(", ") : "nothing") : "any argument but a recipient or target; an amount only lower"}
      </Fact>
      <Fact label="Personal data">
        {tool.personalData ? (
          <>
            <code>{tool.personalData.subject}</code> names the person; sealed under their key: arguments {[tool.personalData.subject, ...tool.personalData.args].join(", ")}; result {tool.personalData.result.length > 0 ? tool.personalData.result.join(", ") : "none"}.{" "}
            <Link href="/admin/personal-data">Erase a person</Link>
          </>
        ) : (
          "none declared: its arguments and results are stored in clear (npm run tools -- personal-data NAME --subject ARG)"
        )}
      </Fact>
      <Fact label="Retention">{tool.retentionSec ? `${formatDuration(tool.retentionSec)} after a run settles, then archived (a run keeps its tools' longest)` : "the server's default (npm run retention -- show)"}</Fact>
      <Fact label="Always require approval">{tool.alwaysRequireApproval ? "yes: every call is held for a person" : "no"}</Fact>
      <Fact label="Two approvers">{tool.twoApprovers ? "yes: a pivot whose plan holds it needs two different people's approvals" : "no: one approval decides"}</Fact>
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
