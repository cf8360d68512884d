"use client";

import { signOut } from "next-auth/react";
import { useEffect, useRef, useState } from "react";
import styles from "./auth.module.css";
import { DashboardPath } from "@/lib/delivery/dashboard-paths";

/** A sign-out button: ends this session, then goes to the sign-in page (a full load, so no signed-in page stays on screen). */
function SignOut({ label }: { label: string }) {
  const [pending, setPending] = useState(false);
  return (
    <button
      type="button"
      className={styles.signOut}
      disabled={pending}
      onClick={async () => {
        setPending(true);
        try {
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

/** Ends every session of this person (other browsers too), then goes to the sign-in page: after a yes. */
export function SignOutEverywhereButton({ full = false }: { /** Always "Sign out everywhere" (the phone's menu has the room), never the short "Everywhere". */ full?: boolean }) {
  const [asking, setAsking] = useState(false);
  const [pending, setPending] = useState(false);
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (asking && !dialog.open) dialog.showModal();
    if (!asking && dialog.open) dialog.close();
  }, [asking]);
  async function signOutEverywhere() {
    setPending(true);
    try {
      await fetch(DashboardPath.signOutEverywhere, { method: "POST", headers: { accept: "application/json" } });
      await signOut({ redirect: false });
    } finally {
      window.location.assign("/signin");
    }
  }
  return (
    <>
      {/* On a phone it reads "Everywhere" beside "Sign out" (the header keeps to one line); its name stays whole. */}
      <button type="button" className={styles.signOut} aria-label="Sign out everywhere" title="Sign out on every device and browser where you are signed in" onClick={() => setAsking(true)}>
        {full ? (
          "Sign out everywhere"
        ) : (
          <>
            <span className={styles.wideOnly}>Sign out everywhere</span>
            <span className={styles.narrowOnly} aria-hidden="true">
              Everywhere
            </span>
          </>
        )}
      </button>
      <dialog ref={ref} className={styles.confirmDialog} aria-labelledby="everywhere-title" aria-describedby="everywhere-what" onClose={() => setAsking(false)}>
        <h2 id="everywhere-title">Sign out everywhere?</h2>
        <p id="everywhere-what">Every browser and device where you are signed in, this one included, is signed out at once; each then needs your password again.</p>
        <div className={styles.confirmButtons}>
          <button type="button" className={styles.danger} disabled={pending} onClick={() => void signOutEverywhere()}>
            {pending ? "Signing out…" : "Yes, sign out everywhere"}
          </button>
          <button type="button" className={styles.signOut} disabled={pending} onClick={() => setAsking(false)}>
            Cancel
          </button>
        </div>
      </dialog>
    </>
  );
}
