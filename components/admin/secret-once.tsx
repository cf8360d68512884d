"use client";

import { useRef, useState, type ReactNode } from "react";
import styles from "./people.module.css";

/**
 * A secret the server returned once (a new user's initial password, an agent token): shown in
 * full with a copy button, above a sentence saying it will not be shown again. The server keeps
 * only a hash, so once this box is closed nobody can read it again.
 */
export function SecretOnce({
  title,
  detail,
  label,
  value,
  testId,
  children,
  onDone,
}: {
  /** What was created ("Account created for Ana"). */
  title: string;
  /** One line about it ("ana@example.com · reviewer"). */
  detail: string;
  /** What the secret is ("Initial password"). */
  label: string;
  /** The secret. */
  value: string;
  /** data-testid of the element holding the secret. */
  testId: string;
  /** What to do with it, and that it will not be shown again. */
  children: ReactNode;
  /** Closes the box (the secret is gone for good). */
  onDone: () => void;
}) {
  const [copy, setCopy] = useState<"idle" | "copied" | "manual">("idle");
  const code = useRef<HTMLElement>(null);

  async function copyValue() {
    try {
      await navigator.clipboard.writeText(value);
      setCopy("copied");
    } catch {
      // No clipboard access (an insecure origin, a denied permission): select it for Ctrl+C instead.
      const node = code.current;
      if (node) window.getSelection()?.selectAllChildren(node);
      setCopy("manual");
    }
  }

  return (
    <section className={styles.secret} aria-labelledby={`${testId}-title`} role="status">
      <h2 id={`${testId}-title`}>{title}</h2>
      <p className={styles.secretDetail}>{detail}</p>
      <span className="cell-label">{label}</span>
      <div className={styles.secretLine}>
        <code ref={code} className={styles.secretValue} data-testid={testId}>
          {value}
        </code>
        <button type="button" className="button small primary" onClick={() => void copyValue()}>
          {copy === "copied" ? "Copied ✓" : "Copy"}
        </button>
        <button type="button" className="button small" onClick={onDone}>
          Done
        </button>
      </div>
      {copy === "manual" && <p className="small">The browser did not allow copying: the text is selected, press Ctrl+C (⌘C on a Mac).</p>}
      {children}
    </section>
  );
}
