import Link from "@/components/link";

/** What a not-found page says and where it leads back to. */
export interface MissingPageProps {
  /** What is missing, with its article ("This run"). */
  what: string;
  /** Why that may be, and what to do. */
  hint: string;
  /** Where to go instead. */
  back: { href: string; label: string };
}

/**
 * The page a stale link or a mistyped id lands on (a run, pivot or escalation that does not exist):
 * says so inside the dashboard's header, and links back to the list it belongs to and to the runs.
 */
export function MissingPage({ what, hint, back }: MissingPageProps) {
  return (
    <div className="missing-page">
      <h1>{what} does not exist</h1>
      <p className="muted">{hint}</p>
      <p className="missing-links">
        <Link className="button primary" href={back.href}>
          {back.label}
        </Link>
        {back.href !== "/" && <Link href="/">All runs</Link>}
      </p>
    </div>
  );
}
