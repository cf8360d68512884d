"use client";

import { useState, type FormEvent, type ReactNode } from "react";
import { Time } from "@/components/saga-display";
import { errorMessage, postParsed } from "@/components/dashboard/live";
import { ROLES, type Role } from "@/lib/server/auth/roles";
import { ZChangedAdminUser, ZCreatedAdminUser, ZAdminUserPage, type TAdminUser, type TAdminUserPage, type TChangedAdminUser, type TCreatedAdminUser } from "@/lib/server/users/admin-views";
import { DeskEmpty, DeskHead, DeskMessageBanner, DeskPager, useDeskPage } from "./admin-desk";
import styles from "./people.module.css";
import { SecretOnce } from "./secret-once";
import { DashboardPath } from "@/lib/delivery/dashboard-paths";
import { FormError, StackTable } from "@/components/section";

/** What each role may do, in the words of lib/server/auth/roles.ts, for the role pickers. */
const ROLE_HINTS = {
  admin: "Everything, including the tool table, users and agent tokens.",
  reviewer: "Decides pivots, works the escalation queue, pulls revoke triggers.",
  support: "Handles correction messages.",
  viewer: "Reads everything, changes nothing.",
} as const satisfies Record<Role, string>;


/** A change waiting for the admin to confirm it on its row. */
type Pending = { email: string; kind: "disable" } | { email: string; kind: "role"; role: Role };

/** Why an account is disabled, in words (null: an admin did it, or it was before reasons were kept). */
const DISABLED_WORDS: Record<string, string> = {
  provider: "deprovisioned by the identity provider",
  no_mapped_group: "none of its groups is mapped",
  admin: "by an admin",
};

/** Props of the people desk. */
export interface UsersAdminProps {
  /** The first page, as the server read it. */
  initial: TAdminUserPage;
  /** The page's cursor. */
  cursor?: string | undefined;
  /** Whether single sign-on is on (local passwords other than the break-glass one are then refused). */
  ssoConfigured?: boolean;
  /** The break-glass flag, shown under the title. */
  flag?: ReactNode;
  /** The single sign-on panel, shown under the form. */
  identity?: ReactNode;
}

/** The people desk: every account, a form to add one (its initial password shown once), role changes, disable and enable. */
export function UsersAdmin({ initial, cursor, ssoConfigured = false, flag, identity }: UsersAdminProps) {
  const [pending, setPending] = useState<Pending | null>(null);
  const [roles, setRoles] = useState<Record<string, Role>>({});
  const { data, error, busy, message, setMessage, act, created, setCreated, onCreated, pageHref } = useDeskPage<TAdminUserPage, TCreatedAdminUser>({
    queryKey: "admin-users",
    path: DashboardPath.findUsers,
    pagePath: "/admin/users",
    cursor,
    initial,
    schema: ZAdminUserPage,
    settle: () => setPending(null),
  });

  function setBreakGlass(user: TAdminUser, breakGlass: boolean) {
    return act(user.email, async () => {
      const result = await postParsed(DashboardPath.setBreakGlass, ZChangedAdminUser, { email: user.email, breakGlass });
      return breakGlass
        ? `${result.user.email} is the break-glass account: it signs in with its password while single sign-on is on.`
        : `${result.user.email} is no longer the break-glass account.`;
    });
  }

  function change(user: TAdminUser, what: Pending["kind"] | "enable", role?: Role) {
    return act(user.email, async () => {
      const url = { role: DashboardPath.setUserRole, disable: DashboardPath.disableUser, enable: DashboardPath.enableUser }[what];
      const result = await postParsed(url, ZChangedAdminUser, what === "role" ? { email: user.email, role } : { email: user.email });
      setRoles((r) => without(r, user.email));
      return changedText(result, what);
    });
  }

  function askRole(user: TAdminUser) {
    const role = roles[user.email];
    if (!role || role === user.role) return;
    // Changing your own role takes this page away from you: ask first. Anyone else's applies at once.
    if (user.email === data.me) setPending({ email: user.email, kind: "role", role });
    else void change(user, "role", role);
  }

  return (
    <>
      <DeskHead title="Users" lead={<>Who may sign in and what they may do. A change applies on the person&rsquo;s next request, and each one is in the audit log.</>} error={error} />
      {flag}

      {created && (
        <SecretOnce
          title={`Account created for ${created.user.name}`}
          detail={`${created.user.email} · ${created.user.role}`}
          label="Initial password"
          value={created.initialPassword}
          testId="initial-password"
          onDone={() => setCreated(null)}
        >
          <p>
            Give it to {created.user.name} through a safe channel; they sign in at <code>/signin</code> with their email and this password.{" "}
            <span className={styles.warning}>It will not be shown again:</span> Sagaboard keeps only a hash of it.
          </p>
        </SecretOnce>
      )}

      <CreateUserForm onCreated={onCreated} />
      {identity}

      <DeskMessageBanner message={message} onDismiss={() => setMessage(null)} testId="users-message" />

      {data.items.length === 0 ? (
        <DeskEmpty what="accounts" cursor={cursor} firstPage={pageHref(undefined)} hint="Add the first person with the form above." />
      ) : (
        <StackTable stack={false} className={styles.stacked} label="Accounts" headers={["Person", "Role", "Status", "Sign-in", "Created", { label: "Actions", hidden: true }]}>
          {data.items.map((user) => {
            const me = user.email === data.me;
            const chosen = roles[user.email] ?? user.role;
            const rowBusy = busy === user.email;
            const asking = pending?.email === user.email ? pending : null;
            return (
              <tr key={user.id} className={user.disabledAt ? styles.off : undefined} data-email={user.email}>
                <td className={styles.person}>
                  <strong>
                    {user.name}
                    {me && <span className={styles.you}>you</span>}
                  </strong>
                  <span className="muted small">{user.email}</span>
                </td>
                <td className={user.groups !== null ? styles.wrapCell : "nowrap"} data-label="Role">
                  {user.groups !== null ? (
                    <div className="cell-stack" data-testid="role-from-groups">
                      <strong>{user.role}</strong>
                      <span className="cell-label">from groups: {user.groups.length > 0 ? user.groups.join(", ") : "none"}</span>
                    </div>
                  ) : (
                  <div className={styles.roleCell}>
                    <select
                      className={styles.roleSelect}
                      aria-label={`Role of ${user.email}`}
                      value={chosen}
                      disabled={rowBusy}
                      onChange={(e) => setRoles((r) => ({ ...r, [user.email]: e.target.value as Role }))}
                    >
                      {!user.roleKnown && (
                        <option value={user.role} disabled>
                          {`“${user.role}” (unknown: grants nothing; pick a role)`}
                        </option>
                      )}
                      {ROLES.map((role) => (
                        <option key={role} value={role}>
                          {role}
                        </option>
                      ))}
                    </select>
                    {chosen !== user.role && (
                      <button type="button" className="button small primary" disabled={rowBusy} onClick={() => askRole(user)}>
                        Save
                      </button>
                    )}
                  </div>
                  )}
                </td>
                <td className={user.disabledReason ? styles.wrapCell : "nowrap"} data-label="Status">
                  <div className="cell-stack">
                    <span className={`badge ${user.disabledAt ? "status-bad" : "status-good"}`}>{user.disabledAt ? "DISABLED" : "ENABLED"}</span>
                    {user.disabledAt && (
                      <span className="cell-label">
                        {user.disabledReason && DISABLED_WORDS[user.disabledReason] ? `${DISABLED_WORDS[user.disabledReason]}, ` : ""}since <Time at={user.disabledAt} />
                      </span>
                    )}
                  </div>
                </td>
                <td className={styles.wrapCell} data-label="Sign-in">
                  <SignInCell user={user} ssoConfigured={ssoConfigured} busy={rowBusy} onBreakGlass={(on) => void setBreakGlass(user, on)} />
                </td>
                <td className="nowrap" data-label="Created">
                  <Time at={user.createdAt} />
                </td>
                <td className={styles.actions}>
                  {asking ? (
                    <div className={styles.confirm} role="group" aria-label={`Confirm the change to ${user.email}`}>
                      <span>
                        {asking.kind === "disable"
                          ? me
                            ? "Disable your own account? You are signed out on your next request."
                            : `Disable ${user.email}? Their next request is refused.`
                          : `Make yourself ${asking.role}? You lose this page on your next request.`}
                      </span>
                      <div>
                        <button
                          type="button"
                          className={`button small ${styles.dangerSolid}`}
                          disabled={rowBusy}
                          onClick={() => void (asking.kind === "disable" ? change(user, "disable") : change(user, "role", asking.role))}
                        >
                          {asking.kind === "disable" ? "Yes, disable" : "Yes, change"}
                        </button>
                        <button type="button" className="button small" disabled={rowBusy} onClick={() => setPending(null)}>
                          Cancel
                        </button>
                      </div>
                    </div>
                  ) : user.disabledAt ? (
                    <button type="button" className="button small" disabled={rowBusy} onClick={() => void change(user, "enable")}>
                      {rowBusy ? "Enabling…" : "Enable"}
                    </button>
                  ) : (
                    <button
                      type="button"
                      className={`button small ${styles.danger}`}
                      disabled={rowBusy}
                      onClick={() => setPending({ email: user.email, kind: "disable" })}
                    >
                      {rowBusy ? "Disabling…" : "Disable"}
                    </button>
                  )}
                </td>
              </tr>
            );
          })}
        </StackTable>
      )}
      <DeskPager cursor={cursor} nextCursor={data.nextCursor} href={pageHref} />
    </>
  );
}

/** How the person signs in; the break-glass account flagged, and the switch for a local admin with a password. */
function SignInCell({ user, ssoConfigured, busy, onBreakGlass }: { user: TAdminUser; ssoConfigured: boolean; busy: boolean; onBreakGlass: (on: boolean) => void }) {
  if (user.breakGlass) {
    return (
      <div className="cell-stack">
        <span className="badge status-pending" data-testid="break-glass-badge">BREAK-GLASS</span>
        <span className="cell-label">password, outside single sign-on</span>
        <button type="button" className="link-button small" disabled={busy} onClick={() => onBreakGlass(false)}>
          Clear break-glass
        </button>
      </div>
    );
  }
  if (user.groups !== null || !user.hasPassword) return <span className="muted">single sign-on</span>;
  const eligible = user.role === "admin" && user.disabledAt === null;
  return (
    <div className="cell-stack">
      <span>password</span>
      {ssoConfigured && <span className="cell-label">refused while single sign-on is on</span>}
      {eligible && (
        <button type="button" className="link-button small" disabled={busy} onClick={() => onBreakGlass(true)}>
          Make break-glass
        </button>
      )}
    </div>
  );
}

function without<T>(record: Record<string, T>, key: string): Record<string, T> {
  const next = { ...record };
  delete next[key];
  return next;
}

function changedText(result: TChangedAdminUser, what: Pending["kind"] | "enable"): string {
  const { user, changed } = result;
  switch (what) {
    case "role":
      return changed ? `${user.email} is now ${user.role}, from their next request.` : `${user.email} already was ${user.role}.`;
    case "disable":
      return changed ? `Disabled ${user.email}: their next request is refused and they cannot sign in.` : `${user.email} was already disabled.`;
    case "enable":
      return changed ? `Enabled ${user.email}: they can sign in again, as ${user.role}.` : `${user.email} was already enabled.`;
  }
}

/** Email, name and role; the server makes up the password and answers it once. */
function CreateUserForm({ onCreated }: { onCreated: (created: TCreatedAdminUser) => Promise<void> }) {
  const [email, setEmail] = useState("");
  const [name, setName] = useState("");
  const [role, setRole] = useState<Role>("viewer");
  const [sending, setSending] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setSending(true);
    setFailure(null);
    try {
      const result = await postParsed(DashboardPath.createUser, ZCreatedAdminUser, { email, name, role });
      setEmail("");
      setName("");
      setRole("viewer");
      await onCreated(result);
    } catch (error) {
      setFailure(errorMessage(error));
    } finally {
      setSending(false);
    }
  }

  return (
    <section className={`panel ${styles.createPanel}`} aria-labelledby="create-user-title">
      <h2 id="create-user-title">Add a person</h2>
      <p className={styles.lead}>Sagaboard makes up a strong initial password and shows it to you once, to hand over.</p>
      <form onSubmit={(e) => void submit(e)} aria-label="Add a person">
        <div className={styles.fields}>
          <div className={styles.field}>
            <label htmlFor="new-user-email">Email</label>
            <input id="new-user-email" type="email" required autoComplete="off" value={email} onChange={(e) => setEmail(e.target.value)} placeholder="ana@example.com" />
          </div>
          <div className={styles.field}>
            <label htmlFor="new-user-name">Name</label>
            <input id="new-user-name" type="text" required autoComplete="off" value={name} onChange={(e) => setName(e.target.value)} placeholder="Ana Lima" />
          </div>
          <div className={styles.field}>
            <label htmlFor="new-user-role">Role</label>
            <select id="new-user-role" value={role} onChange={(e) => setRole(e.target.value as Role)} aria-describedby="new-user-role-hint">
              {ROLES.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>
            <p id="new-user-role-hint" className={styles.hint}>
              {ROLE_HINTS[role]}
            </p>
          </div>
        </div>
        <div className={styles.formActions}>
          <button type="submit" className="button primary" disabled={sending}>
            {sending ? "Creating…" : "Create account"}
          </button>
        </div>
        <FormError message={failure} />
      </form>
    </section>
  );
}
