// A resolved escalation, as the workbench shows it: who resolved it and when, what was decided (field
// by field), and whether the run still needs people.

import { runStatusInWords } from "@/lib/desks/dashboard/run-status-words";
import Link from "@/components/link";
import { LabelledValues, Time } from "@/components/saga-display";
import type { TEscalationDetail } from "@/lib/desks/escalations/views";
import { REJECTION_CODE_LABELS } from "@/components/dashboard/labels";

/** Fields of a resolution that only repeat who decided (said once, above it). */
const WHO_FIELDS = ["resolvedBy", "settledBy", "decidedBy", "repairedBy", "reasonCode"];

/** What was decided, field by field (who decided is said once, above it); the raw form one click away. */
function Resolution({ value }: { value: TEscalationDetail["escalation"]["resolution"] }) {
  if (value === null) return null;
  const shown = typeof value === "object" && !Array.isArray(value) ? Object.fromEntries(Object.entries(value).filter(([k]) => !WHO_FIELDS.includes(k))) : value;
  const code = typeof value === "object" && value !== null && !Array.isArray(value) && typeof value.reasonCode === "string" ? value.reasonCode : null;
  return (
    <div className="resolution">
      {code && code !== "OTHER" && <p className="body-text">The agent was told: {REJECTION_CODE_LABELS[code as keyof typeof REJECTION_CODE_LABELS] ?? code}.</p>}
      <LabelledValues value={shown} />
    </div>
  );
}

/** A resolved escalation: who resolved it and when, what was decided, and what is left of its run for people. */
export function Resolved({ escalation, run }: { escalation: TEscalationDetail["escalation"]; run: TEscalationDetail["run"] }) {
  return (
    <div className="decided approved">
      <p>
        <strong>Resolved</strong> by {escalation.resolvedBy ?? "someone"} at <Time at={escalation.resolvedAt} /> UTC
      </p>
      <Resolution value={escalation.resolution} />
      {(run.status === "UNWOUND" || run.status === "COMPLETED") && (
        <p className="body-text" data-testid="run-finished">
          The run is {runStatusInWords(run.status)}: nothing is left for people on it.
        </p>
      )}
      {run.status === "NEEDS_ATTENTION" && (
        <p className="body-text">
          The run still needs people for other items: <Link href={`/runs/${encodeURIComponent(run.id)}`}>see what is left</Link>.
        </p>
      )}
    </div>
  );
}
