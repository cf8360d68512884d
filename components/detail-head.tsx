import type { ReactNode } from "react";
import { StatusBadge } from "@/components/saga-display";
import { LiveMarker } from "@/components/dashboard/live";
import { BackLink } from "@/components/section";

/**
 * The head of a page about one thing (a run, a pivot, an escalation): the way back, the title line
 * with what kind of thing it is, its status and whether the page is still updating, then the facts
 * under the title (`children`) and what stands beside them (`aside`).
 */
export function DetailHead({
  back,
  title,
  kind,
  status,
  error,
  aside,
  children,
}: {
  back: { href: string; label: ReactNode };
  title: ReactNode;
  kind?: ReactNode;
  status: string;
  error: unknown;
  aside?: ReactNode;
  children: ReactNode;
}) {
  return (
    <>
      <BackLink href={back.href}>{back.label}</BackLink>
      <div className="page-head">
        <div>
          <div className="title-line">
            {kind}
            <h1>{title}</h1>
            <StatusBadge status={status} />
            <LiveMarker error={error} />
          </div>
          {children}
        </div>
        {aside}
      </div>
    </>
  );
}

/** The labelled facts under a page's title. */
export function MetaList({ children }: { children: ReactNode }) {
  return <dl className="run-meta">{children}</dl>;
}

/** One labelled fact under a page's title. */
export function Meta({ label, title, children }: { label: ReactNode; title?: string; children: ReactNode }) {
  return (
    <div>
      <dt>{label}</dt>
      <dd title={title}>{children}</dd>
    </div>
  );
}
