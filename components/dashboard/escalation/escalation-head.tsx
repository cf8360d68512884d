// The head of the escalation workbench: the kind and title, its status (live), the run it stops, on
// whose behalf, whose queue it is in, how old it is, what a person does about its kind.

import Link from "@/components/link";
import { Mono, StatusBadge, formatDuration } from "@/components/saga-display";
import type { TEscalationDetail } from "@/lib/desks/escalations/views";
import { KIND_HINTS, kindLabel } from "@/components/dashboard/labels";
import styles from "@/components/dashboard/reviewer.module.css";
import { DetailHead, Meta, MetaList } from "@/components/detail-head";

/** The head of the escalation workbench: what the item is, its run, owner and age, and a jump to the resolution. */
export function EscalationHead({ escalation, run, error }: { escalation: TEscalationDetail["escalation"]; run: TEscalationDetail["run"]; error: unknown }) {
  return (
    <DetailHead
      back={{ href: "/escalations", label: "Escalation queue" }}
      kind={<span className={`kind kind-${escalation.kind.toLowerCase()}`}>{kindLabel(escalation.kind)}</span>}
      title={escalation.title}
      status={escalation.status}
      error={error}
    >
      <MetaList>
        <Meta label="Run">
          <Link href={`/runs/${encodeURIComponent(run.id)}`}>{run.title}</Link> <StatusBadge status={run.status} />
        </Meta>
        <Meta label="On behalf of">{run.onBehalfOf ?? <span className="muted">—</span>}</Meta>
        <Meta label="Owner">{escalation.owner ?? <span className="muted">unrouted</span>}</Meta>
        <Meta label={escalation.status === "RESOLVED" ? "Was open for" : "Age"} title={escalation.createdAt}>
          {formatDuration(escalation.ageSeconds)}
        </Meta>
        <Meta label="Id">
          <Mono text={escalation.id} />
        </Meta>
      </MetaList>
      <p className="muted small kind-hint">{KIND_HINTS[escalation.kind]}</p>
      <a href="#resolution" className={styles.jumpToDecision}>
        Go to the resolution ↓
      </a>
    </DetailHead>
  );
}
