"use client";

import { signIn } from "next-auth/react";
import { useState, type FormEvent } from "react";
import { RATE_LIMITED_SIGN_IN_ERROR, rateLimitedSeconds, rateLimitedSentence } from "@/lib/server/auth/rate-limited-code";
import styles from "./auth.module.css";

/** What the form says for each next-auth error code (and ours); anything else gets a generic line. */
const ERROR_MESSAGES: Record<string, string> = {
  CredentialsSignin: "That email and password do not match an account. Check both and try again.",
  AccountDisabled: "This account is disabled. Ask an admin to enable it.",
  AccessDenied: "Single sign-on worked, but no enabled Sagaboard account has that email. Ask an admin to create one.",
  SsoRequired: "This organisation signs in with single sign-on: use the button below. Only the break-glass admin signs in with a password.",
  OAuthCallback:
    "Single sign-on did not complete: the identity provider's answer failed Sagaboard's checks (a wrong or expired state, or a PKCE mismatch). Start again with the single sign-on button; the attempt is in the audit log.",
  Callback: "Single sign-on did not complete. Start again with the single sign-on button; if it keeps failing, ask an admin to check the identity provider's settings.",
  OAuthSignin: "Sagaboard could not reach the identity provider to start single sign-on. Try again in a moment; if it keeps failing, ask an admin.",
  SessionRequired: "Sign in to continue.",
};

/** A sentence for an error code from next-auth or the address bar. */
export function signInErrorMessage(code: string): string {
  const wait = rateLimitedSeconds(code);
  if (wait !== null) return rateLimitedSentence(wait);
  return ERROR_MESSAGES[code] ?? `Sign-in did not work (${code}). Try again; if it keeps failing, ask an admin.`;
}

/** Props of the sign-in form. */
export interface SignInFormProps {
  /** Same-site path to open after signing in (already checked by the page). */
  callbackUrl: string;
  /** An error code to explain on arrival (`?error=...`), or null. */
  initialError: string | null;
  /** The SSO button's label when OIDC is configured; null hides the button. */
  ssoName: string | null;
  /** Deciding from an approval email needs a fresh sign-in: say so, and make the provider ask again. */
  reauth?: boolean;
}

/** Email + password sign-in, and single sign-on when configured. */
export function SignInForm({ callbackUrl, initialError, ssoName, reauth = false }: SignInFormProps) {
  const [error, setError] = useState<string | null>(initialError ? signInErrorMessage(initialError) : null);
  const [pending, setPending] = useState(false);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setPending(true);
    setError(null);
    try {
      const result = await signIn("credentials", {
        email: String(form.get("email") ?? ""),
        password: String(form.get("password") ?? ""),
        redirect: false,
      });
      if (result?.ok && !result.error) {
        // A full load, so the server renders the header and page for the new session.
        window.location.assign(callbackUrl);
        return;
      }
      // A throttled sign-in (429) names its wait in the code; without one, still say it was throttled.
      const fallback = result?.status === 429 ? RATE_LIMITED_SIGN_IN_ERROR : "CredentialsSignin";
      setError(signInErrorMessage(result?.error ?? fallback));
    } catch {
      setError("Sagaboard could not be reached. Check your connection and try again.");
    }
    setPending(false);
  }

  return (
    <>
      {reauth && (
        <p className={styles.error} role="status" data-testid="signin-reauth">
          To decide from an approval email, sign in again: your single sign-on session is older than Sagaboard allows for that.
        </p>
      )}
      <form className={styles.form} onSubmit={onSubmit} aria-describedby={error ? "signin-error" : undefined}>
        {error && (
          <p className={styles.error} id="signin-error" role="alert" data-testid="signin-error">
            {error}
          </p>
        )}
        <div className={styles.field}>
          <label htmlFor="signin-email">Email</label>
          <input id="signin-email" name="email" type="email" autoComplete="username" required autoFocus />
        </div>
        <div className={styles.field}>
          <label htmlFor="signin-password">Password</label>
          <input id="signin-password" name="password" type="password" autoComplete="current-password" required />
        </div>
        <button type="submit" className={styles.primary} disabled={pending}>
          {pending ? "Signing in…" : "Sign in"}
        </button>
      </form>
      {ssoName !== null && (
        <>
          <div className={styles.divider}>or</div>
          <button
            type="button"
            className={styles.secondary}
            disabled={pending}
            onClick={() => {
              setPending(true);
              // prompt=login: the provider asks for the password again instead of reusing its own session.
              void signIn("oidc", { callbackUrl }, reauth ? { prompt: "login" } : undefined);
            }}
          >
            Sign in with {ssoName}
          </button>
        </>
      )}
    </>
  );
}
