import type { ReactNode } from "react";
import Link from "@/components/link";

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

/** A column head: its words, or `{ label, num: true }` (right-aligned numbers), or `{ label, hidden: true }` (a column of buttons: named for screen readers, blank on screen); `false` leaves it out. */
export type ColumnHead = string | { label: string; num?: true; hidden?: true } | false;

/**
 * A table that reads as one labelled card per row on a phone (each cell carries its `data-label`):
 * with the global `stack-on-phone` rule, or with a module's own (`stack={false}`, its class in `className`).
 */
export function StackTable({ headers, className, label, stack = true, children }: { headers: readonly ColumnHead[]; className?: string; label?: string; stack?: boolean; children: ReactNode }) {
  const classes = [stack ? "stack-on-phone" : null, className].filter(Boolean).join(" ");
  return (
    <div className="table-wrap">
      <table className={classes || undefined} aria-label={label}>
        <thead>
          <tr>
            {headers.map((h) => {
              if (h === false) return null;
              if (typeof h === "string") return <th key={h}>{h}</th>;
              if (h.hidden) return <th key={h.label} aria-label={h.label} />;
              return (
                <th key={h.label} className={h.num ? "num" : undefined}>
                  {h.label}
                </th>
              );
            })}
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

/** What went wrong with a form, said where the person looks (announced at once); nothing when all is well. */
export function FormError({ message }: { message: string | null | undefined }) {
  if (!message) return null;
  return (
    <p className="form-error" role="alert">
      {message}
    </p>
  );
}
