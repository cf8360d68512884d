"use client";

/**
 * Single sign-on on the users page: whether it is on, the break-glass account (flagged, or its
 * absence warned about), the group -> role mapping an admin edits, and the SCIM tokens an identity
 * provider provisions people with (a new one's secret shown once).
 */
import { useState, type FormEvent } from "react";
import { Time } from "@/components/saga-display";
import { errorMessage, postParsed, useLive } from "@/components/dashboard/live";
import { FormError } from "@/components/section";
import { DashboardPath } from "@/lib/delivery/dashboard-paths";
import { ROLES, type Role } from "@/lib/server/auth/roles";
import { ZScimTokenView } from "@/lib/server/scim/scim-token";
import { ZSsoSettings, type TSsoSettings } from "@/lib/server/sso/find-sso-settings";
import { ZCreatedScimToken, ZSavedGroupRoles, type TCreatedScimToken } from "@/lib/server/sso/sso-admin-views";
import { DeskMessageBanner, type DeskMessage } from "./admin-desk";
import styles from "./people.module.css";
import { SecretOnce } from "./secret-once";

/** One row of the mapping as the editor holds it. */
type Row = { key: number; group: string; role: Role };

let rowKeys = 0;

/** The break-glass account, or a warning that there is none while single sign-on is on. */
export function BreakGlassBanner({ settings }: { settings: TSsoSettings }) {
  const glass = settings.breakGlass;
  if (glass) {
    return (
      <div className="banner warn" role="status" data-testid="break-glass-banner">
        <span>
          <strong>Break-glass account: {glass.email}</strong> signs in with a password, outside the identity provider
          {glass.disabled ? " (disabled now)" : ""}. Last sign-in: {glass.lastSignInAt ? <Time at={glass.lastSignInAt} /> : "never"}. Use it only when single
          sign-on fails; each sign-in is in its audit log.
        </span>
      </div>
    );
  }
  if (!settings.configured) return null;
  return (
    <div className="banner bad" role="alert" data-testid="break-glass-banner">
      <span>
        <strong>No break-glass account.</strong> Single sign-on is on: if the identity provider fails, no admin can get in. Mark one local admin with a
        password as break-glass in the table below.
      </span>
    </div>
  );
}

/** The single sign-on panel. */
export function SsoAdmin({ initial }: { initial: TSsoSettings }) {
  const { data, refetch } = useLive(["admin-sso"], DashboardPath.getSsoSettings, initial, ZSsoSettings);
  const [rows, setRows] = useState<Row[] | null>(null);
  const [saving, setSaving] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const [message, setMessage] = useState<DeskMessage | null>(null);
  const [created, setCreated] = useState<TCreatedScimToken | null>(null);
  const editing = rows ?? data.mapping.map((m) => ({ key: ++rowKeys, group: m.group, role: m.role }));

  function update(key: number, change: Partial<Row>) {
    setRows(editing.map((r) => (r.key === key ? { ...r, ...change } : r)));
  }

  async function save(e: FormEvent) {
    e.preventDefault();
    setSaving(true);
    setFailure(null);
    try {
      const result = await postParsed(DashboardPath.saveGroupRoles, ZSavedGroupRoles, { mapping: editing.filter((r) => r.group.trim() !== "").map((r) => ({ group: r.group.trim(), role: r.role })) });
      setRows(null);
      await refetch();
      const who = result.changed.map((c) => `${c.email} ${c.disabledReason ? "lost access" : `is now ${c.role}`}`);
      setMessage({ tone: "good", text: `Saved ${result.mapping.length} group${result.mapping.length === 1 ? "" : "s"}.${who.length > 0 ? ` Changed at once: ${who.join("; ")}.` : " Nobody's role changed."}` });
    } catch (error) {
      setFailure(errorMessage(error));
    } finally {
      setSaving(false);
    }
  }

  return (
    <section className={`panel ${styles.createPanel}`} aria-labelledby="sso-title" data-testid="sso-panel">
      <h2 id="sso-title">Single sign-on</h2>
      <p className={styles.lead}>
        {data.configured ? (
          <>
            On: people sign in through <code>{data.issuer}</code>. Their role comes from the <code>{data.groupsClaim}</code> claim
            through the groups below, read again at every sign-in; a person in no listed group is refused with a page that says why.
          </>
        ) : (
          <>
            Off in this deployment (set <code>OIDC_ISSUER</code>, <code>OIDC_CLIENT_ID</code> and <code>OIDC_CLIENT_SECRET</code>). You can map groups now; they
            apply from the first sign-in.
          </>
        )}
      </p>
      <DeskMessageBanner message={message} onDismiss={() => setMessage(null)} testId="sso-message" />

      <form onSubmit={(e) => void save(e)} aria-label="Groups and roles">
        <h3 className={styles.subhead}>Groups and roles</h3>
        {editing.length === 0 ? (
          <p className="muted">No group is mapped yet: nobody can sign in through single sign-on. Add the provider&rsquo;s group names and the role each gives.</p>
        ) : (
          <ul className={styles.mappingList}>
            {editing.map((row, i) => (
              <li key={row.key} className={styles.mappingRow}>
                <input aria-label={`Group ${i + 1}`} value={row.group} placeholder="sagaboard-reviewers" onChange={(e) => update(row.key, { group: e.target.value })} />
                <span aria-hidden="true">→</span>
                <select aria-label={`Role of group ${i + 1}`} value={row.role} onChange={(e) => update(row.key, { role: e.target.value as Role })}>
                  {ROLES.map((role) => (
                    <option key={role} value={role}>
                      {role}
                    </option>
                  ))}
                </select>
                <button type="button" className="link-button small" onClick={() => setRows(editing.filter((r) => r.key !== row.key))}>
                  Remove
                </button>
              </li>
            ))}
          </ul>
        )}
        <div className={styles.formActions}>
          <button type="button" className="button small" onClick={() => setRows([...editing, { key: ++rowKeys, group: "", role: "viewer" }])}>
            Add a group
          </button>
          <button type="submit" className="button primary" disabled={saving || rows === null}>
            {saving ? "Saving…" : "Save groups"}
          </button>
        </div>
        <p className={styles.hint}>The most powerful role of a person&rsquo;s groups wins. Saving applies at once: someone who loses a role is signed out.</p>
        <FormError message={failure} />
      </form>

      <h3 className={styles.subhead}>Provisioning (SCIM 2.0)</h3>
      <p className="muted small">
        Point the identity provider&rsquo;s SCIM client at <code>{data.scimBaseUrl}</code> with a token from here. Deactivating a person there disables their
        account and ends their sessions at once.
      </p>
      {created && (
        <SecretOnce title={`SCIM token ${created.token.name}`} detail={`for ${data.scimBaseUrl}`} label="Bearer token" value={created.secret} testId="scim-secret" onDone={() => setCreated(null)}>
          <p>
            Paste it into the identity provider&rsquo;s provisioning settings now. <span className={styles.warning}>It will not be shown again:</span> Sagaboard keeps
            only a hash of it.
          </p>
        </SecretOnce>
      )}
      <ScimTokens tokens={data.scimTokens} onChange={refetch} onCreated={setCreated} onMessage={setMessage} />
    </section>
  );
}

function ScimTokens({
  tokens,
  onChange,
  onCreated,
  onMessage,
}: {
  tokens: TSsoSettings["scimTokens"];
  onChange: () => Promise<unknown>;
  onCreated: (created: TCreatedScimToken) => void;
  onMessage: (message: DeskMessage) => void;
}) {
  const [name, setName] = useState("");
  const [busy, setBusy] = useState<string | null>(null);
  const [failure, setFailure] = useState<string | null>(null);

  async function create(e: FormEvent) {
    e.preventDefault();
    setBusy("create");
    setFailure(null);
    try {
      onCreated(await postParsed(DashboardPath.createScimToken, ZCreatedScimToken, { name }));
      setName("");
      await onChange();
    } catch (error) {
      setFailure(errorMessage(error));
    } finally {
      setBusy(null);
    }
  }

  async function revoke(tokenName: string) {
    setBusy(tokenName);
    try {
      await postParsed(DashboardPath.revokeScimToken, ZScimTokenView, { name: tokenName });
      onMessage({ tone: "good", text: `Revoked ${tokenName}: the identity provider's next request with it gets 401.` });
      await onChange();
    } catch (error) {
      onMessage({ tone: "bad", text: errorMessage(error) });
    } finally {
      setBusy(null);
    }
  }

  return (
    <>
      {tokens.length === 0 ? (
        <p className="muted small">No SCIM token yet.</p>
      ) : (
        <ul className={styles.mappingList} aria-label="SCIM tokens">
          {tokens.map((t) => (
            <li key={t.id} className={styles.mappingRow}>
              <strong>{t.name}</strong>
              <code>{t.prefix}…</code>
              <span className="muted small">{t.revokedAt ? <>revoked <Time at={t.revokedAt} /></> : t.lastUsedAt ? <>last used <Time at={t.lastUsedAt} /></> : "never used"}</span>
              {!t.revokedAt && (
                <button type="button" className={`button small ${styles.danger}`} disabled={busy !== null} onClick={() => void revoke(t.name)}>
                  {busy === t.name ? "Revoking…" : "Revoke"}
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      <form onSubmit={(e) => void create(e)} aria-label="New SCIM token" className={styles.inlineForm}>
        <label htmlFor="scim-token-name">Token name</label>
        <input id="scim-token-name" value={name} required placeholder="okta" onChange={(e) => setName(e.target.value)} />
        <button type="submit" className="button small primary" disabled={busy !== null}>
          {busy === "create" ? "Making…" : "Make a SCIM token"}
        </button>
      </form>
      <FormError message={failure} />
    </>
  );
}
