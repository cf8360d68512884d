// The head of the escalation workbench: the kind and title, its status (live), the run it stops, on
// whose behalf, whose queue it is in, how old it is, what a person does about its kind.

import Link from "next/link";
import { Mono, StatusBadge, formatDuration } from "@/components/saga-display";
import type { TEscalationDetail } from "@/lib/desks/escalations/views";
import { LiveMarker } from "@/components/dashboard/live";
import { KIND_HINTS, kindLabel } from "@/components/dashboard/labels";
import styles from "@/components/dashboard/reviewer.module.css";
import { BackLink } from "@/components/section";

/** The head of the escalation workbench: what the item is, its run, owner and age, and a jump to the resolution. */
export function EscalationHead({ escalation, run, error }: { escalation: TEscalationDetail["escalation"]; run: TEscalationDetail["run"]; error: unknown }) {
  return (
    <>
      <BackLink href="/escalations">Escalation queue</BackLink>
      <div className="page-head">
        <div>
          <div className="title-line">
            <span className={`kind kind-${escalation.kind.toLowerCase()}`}>{kindLabel(escalation.kind)}</span>
            <h1>{escalation.title}</h1>
            <StatusBadge status={escalation.status} />
            <LiveMarker error={error} />
          </div>
          <dl className="run-meta">
            <div>
              <dt>Run</dt>
              <dd>
                <Link href={`/runs/${encodeURIComponent(run.id)}`}>{run.title}</Link> <StatusBadge status={run.status} />
              </dd>
            </div>
            <div>
              <dt>On behalf of</dt>
              <dd>{run.onBehalfOf ?? <span className="muted">—</span>}</dd>
            </div>
            <div>
              <dt>Owner</dt>
              <dd>{escalation.owner ?? <span className="muted">unrouted</span>}</dd>
            </div>
            <div>
              <dt>{escalation.status === "RESOLVED" ? "Was open for" : "Age"}</dt>
              <dd title={escalation.createdAt}>{formatDuration(escalation.ageSeconds)}</dd>
            </div>
            <div>
              <dt>Id</dt>
              <dd>
                <Mono text={escalation.id} />
              </dd>
            </div>
          </dl>
          <p className="muted small kind-hint">{KIND_HINTS[escalation.kind]}</p>
          <a href="#resolution" className={styles.jumpToDecision}>
            Go to the resolution ↓
          </a>
        </div>
      </div>
    </>
  );
}
