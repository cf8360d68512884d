import type { Metadata } from "next";
import styles from "@/components/auth/auth.module.css";
import { SignInForm } from "@/components/auth/sign-in-form";
import { isOidcConfigured } from "@/lib/server/auth/options";
import { safeReturnPath } from "@/lib/server/auth/return-path";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Sign in" };

type SearchParams = Record<string, string | string[] | undefined>;

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The one page that needs no session. */
export default async function SignInPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const query = await searchParams;
  const error = first(query.error);
  return (
    <div className={styles.signinPage}>
      <div className={styles.card}>
        <h1>Sign in to Sagaboard</h1>
        <p className={styles.lead}>Review pivots, work the escalation queue and answer what your agents did.</p>
        <SignInForm
          callbackUrl={safeReturnPath(first(query.callbackUrl))}
          initialError={error ? error.slice(0, 100) : null}
          ssoName={isOidcConfigured() ? `${process.env.OIDC_NAME ?? "SSO"}` : null}
          reauth={first(query.reauth) === "approval"}
        />
        <p className={styles.hint}>
          Trying Sagaboard locally? <code>npm start</code> prints the demo accounts.
        </p>
      </div>
    </div>
  );
}
