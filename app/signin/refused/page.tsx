import type { Metadata } from "next";
import Link from "@/components/link";
import styles from "@/components/auth/auth.module.css";
import { resolveAuthSecret } from "@/lib/server/auth/options";
import { readRefusal, type TSsoRefusal } from "@/lib/server/sso/sso-refusal";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Sign-in refused" };

type SearchParams = Record<string, string | string[] | undefined>;

/** What happened, and who can change it, for each reason. */
function explanation(refusal: TSsoRefusal): { what: string; next: string } {
  const who = refusal.email ?? "your account";
  const groups = refusal.groups.length > 0 ? `Your groups: ${refusal.groups.join(", ")}.` : "Your identity provider sent no groups for you (it may not send the groups claim to Sagaboard).";
  switch (refusal.reason) {
    case "no_mapped_group":
      return {
        what: `Your identity provider signed you in as ${who}, but none of your groups gives a Sagaboard role. ${groups}`,
        next: "Ask a Sagaboard admin to map one of your groups to a role (Users, Single sign-on), or ask whoever runs your identity provider to add you to a group that is mapped.",
      };
    case "disabled":
      return {
        what: `The Sagaboard account of ${who} is disabled: an admin disabled it, or your identity provider deactivated you.`,
        next: "Ask a Sagaboard admin to check your account on the users page.",
      };
    case "break_glass":
      return {
        what: `${who} is Sagaboard's break-glass account, which signs in with its password, never through single sign-on.`,
        next: "Sign in with the email and password form instead.",
      };
    case "no_email":
      return {
        what: "Your identity provider did not send a verified email address, and Sagaboard knows people by their email.",
        next: "Ask whoever runs your identity provider to send the email claim (verified) to Sagaboard.",
      };
  }
}

/** Why single sign-on let the person in at the provider but not into Sagaboard (no session needed). */
export default async function SignInRefusedPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const raw = (await searchParams).r;
  const refusal = readRefusal(Array.isArray(raw) ? raw[0] : raw, resolveAuthSecret());
  const words = refusal ? explanation(refusal) : null;
  return (
    <div className={styles.signinPage}>
      <div className={styles.card} data-testid="sso-refused">
        <h1>Sagaboard did not let you in</h1>
        {words ? (
          <>
            <p className={styles.lead}>{words.what}</p>
            <p>{words.next}</p>
          </>
        ) : (
          <p className={styles.lead}>This page explains a refused sign-in for 15 minutes after it happened; this one is older, or its address was changed. Sign in again to see why.</p>
        )}
        <p className={styles.hint}>
          <Link href="/signin">Back to sign in</Link>
        </p>
      </div>
    </div>
  );
}
