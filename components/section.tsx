import type { ReactNode } from "react";
import Link from "next/link";

/**
 * A titled section of a page with how many things it holds, and a sentence in their place when it
 * holds none. `before` sits between the title and the contents either way (a link, a hint).
 */
export function CountedSection({ id, title, count, empty, before, children }: { id: string; title: string; count: number; empty: string; before?: ReactNode; children: ReactNode }) {
  return (
    <section className="section" aria-labelledby={id}>
      <h2 id={id}>
        {title}
        <span className="count">{count}</span>
      </h2>
      {before}
      {count === 0 ? <p className="empty-inline">{empty}</p> : children}
    </section>
  );
}

/** A table that reads as one labelled card per row on a phone (each cell carries its `data-label`). */
export function StackTable({ headers, className, children }: { headers: readonly (string | { label: string; num: true })[]; className?: string; children: ReactNode }) {
  return (
    <div className="table-wrap">
      <table className={className ? `stack-on-phone ${className}` : "stack-on-phone"}>
        <thead>
          <tr>
            {headers.map((h) =>
              typeof h === "string" ? (
                <th key={h}>{h}</th>
              ) : (
                <th key={h.label} className="num">
                  {h.label}
                </th>
              ),
            )}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/** The way back from a page, above its title (`← All runs`). */
export function BackLink({ href, children }: { href: string; children: ReactNode }) {
  return (
    <Link href={href} className="back-link">
      ← {children}
    </Link>
  );
}
