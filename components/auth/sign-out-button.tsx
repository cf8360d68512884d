"use client";

import { signOut } from "next-auth/react";
import { useState } from "react";
import styles from "./auth.module.css";
import { DashboardPath } from "@/lib/api/dashboard-paths";

/** A sign-out button: runs `before` (if any), ends this session, then goes to the sign-in page (a full load, so no signed-in page stays on screen). */
function SignOut({ label, title, before }: { label: string; title?: string; before?: () => Promise<unknown> }) {
  const [pending, setPending] = useState(false);
  return (
    <button
      type="button"
      className={styles.signOut}
      disabled={pending}
      title={title}
      onClick={async () => {
        setPending(true);
        try {
          await before?.();
          // redirect: false because next-auth would send us to NEXTAUTH_URL's host, which may not be
          // the one in the address bar; the next request is refused anyway once the cookie is gone.
          await signOut({ redirect: false });
        } finally {
          window.location.assign("/signin");
        }
      }}
    >
      {pending ? "Signing out…" : label}
    </button>
  );
}

/** Ends the session, then goes to the sign-in page. */
export function SignOutButton() {
  return <SignOut label="Sign out" />;
}

/** Ends every session of this person (other browsers too), then goes to the sign-in page. */
export function SignOutEverywhereButton() {
  return (
    <SignOut
      label="Sign out everywhere"
      title="Sign out on every device and browser where you are signed in"
      before={() => fetch(DashboardPath.signOutEverywhere, { method: "POST", headers: { accept: "application/json" } })}
    />
  );
}
