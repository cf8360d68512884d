import Link from "@/components/link";
import styles from "./auth.module.css";
import { SignOutButton } from "./sign-out-button";

/**
 * What a page shows instead of itself when the signed-in person's role lacks the permission
 * (requirePageUser returns it). The server still refuses the underlying actions with 403.
 */
export function Forbidden({ message }: { message: string }) {
  return (
    <section className={styles.forbidden} aria-labelledby="forbidden-title">
      <p className={styles.status}>403 · Not allowed</p>
      <h1 id="forbidden-title">You cannot open this page</h1>
      <p>{message}</p>
      <div className={styles.forbiddenActions}>
        <Link href="/">Back to runs</Link>
        <SignOutButton />
      </div>
    </section>
  );
}
