import Link from "@/components/link";
import { getCurrentUser, type CurrentUser } from "@/lib/server/auth/current-user";
import styles from "./auth.module.css";
import { SignOutButton, SignOutEverywhereButton } from "./sign-out-button";

/**
 * The signed-in person's name and role, and a sign-out button (server component). Renders nothing
 * when nobody is signed in. Pass `user` when the caller already has it, to save a database read.
 */
export async function UserMenu({ user }: { user?: CurrentUser | null }) {
  const current = user === undefined ? await getCurrentUser() : user;
  if (!current) return null;
  return (
    <div className={styles.userMenu} data-testid="user-menu">
      {/* The name opens the person's own page: what Sagaboard emails them about. */}
      <Link href="/me/notifications" className={styles.userName} title={`${current.email}: my notifications`}>
        {current.name}
      </Link>
      <span className={styles.role} data-testid="user-role">
        {current.role}
      </span>
      <SignOutButton />
      {/* On a phone it is in the header's menu (components/nav-menu.tsx): the header keeps to one line. */}
      <span className={styles.everywhereInHeader}>
        <SignOutEverywhereButton />
      </span>
    </div>
  );
}
