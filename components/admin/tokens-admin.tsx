"use client";

import Link from "@/components/link";
import { useState, type FormEvent } from "react";
import { formatDuration, Time } from "@/components/saga-display";
import { errorMessage, postParsed } from "@/components/dashboard/live";
import { ZCreatedAdminToken, ZRevokedAdminToken, ZAdminTokenPage, type TAdminToken, type TAdminTokenPage, type TCreatedAdminToken } from "@/lib/server/tokens/admin-views";
import * as z from "zod";
import { DeskEmpty, DeskHead, DeskMessageBanner, DeskPager, useDeskPage } from "./admin-desk";
import styles from "./people.module.css";
import { SecretOnce } from "./secret-once";
import { DashboardPath } from "@/lib/delivery/dashboard-paths";
import { FormError, StackTable } from "@/components/section";

/** What each token role may do (lib/server/tokens/token-fields.ts ZTokenRole). */
const TOKEN_ROLE_HINTS = {
  agent: "Records its own runs, for the tools below.",
  worker: "Unwinds and reconciles any agent's runs, for the tools below.",
} as const;
type TokenRole = keyof typeof TOKEN_ROLE_HINTS;


/** The agent-token desk: every token, a form to create one (its secret shown once), revoke with a confirmation. */
export function TokensAdmin({ initial, cursor }: { initial: TAdminTokenPage; cursor?: string | undefined }) {
  const [confirming, setConfirming] = useState<string | null>(null);
  const { data, error, busy, message, setMessage, act, created, setCreated, onCreated, pageHref } = useDeskPage<TAdminTokenPage, TCreatedAdminToken>({
    queryKey: "admin-tokens",
    path: DashboardPath.findTokens,
    pagePath: "/admin/tokens",
    cursor,
    initial,
    schema: ZAdminTokenPage,
    settle: () => setConfirming(null),
  });

  function revoke(token: TAdminToken) {
    return act(token.name, async () => {
      const result = await postParsed(DashboardPath.revokeToken, ZRevokedAdminToken, { name: token.name });
      return result.changed ? `Revoked “${token.name}”: its next request gets 401.` : `“${token.name}” was already revoked.`;
    });
  }

  return (
    <>
      <DeskHead title="Agent tokens" lead="What lets an agent or a worker use the API, scoped to tools of the tool table. A revoked token is refused on its next request." error={error} />

      {created && (
        <SecretOnce
          title={`Token “${created.token.name}” created`}
          detail={`${created.token.role} · ${created.token.tools.join(", ")}`}
          label="Secret"
          value={created.secret}
          testId="token-secret"
          onDone={() => setCreated(null)}
        >
          <p>
            <span className={styles.warning}>This secret will not be shown again:</span> store it now where the agent reads it. The agent sends it
            as <code>Authorization: Bearer &lt;secret&gt;</code>; Sagaboard keeps only a hash of it.
          </p>
        </SecretOnce>
      )}

      <ExpiringSoon tokens={data.items} />

      <CreateTokenForm tools={data.tools} defaultLifetimeSec={data.defaultLifetimeSec} onCreated={onCreated} />

      <DefaultLifetime seconds={data.defaultLifetimeSec} onSaved={(text) => act("lifetime", async () => text)} />

      <DeskMessageBanner message={message} onDismiss={() => setMessage(null)} testId="tokens-message" />

      {data.items.length === 0 ? (
        <DeskEmpty what="agent tokens" cursor={cursor} firstPage={pageHref(undefined)} hint="Create one above for each agent or worker; give each its own, so its runs stay attributable." />
      ) : (
        <StackTable stack={false} className={styles.stacked} label="Agent tokens" headers={["Token", "Role", "Tools", "Created", "Last used", "Expires", "Status", { label: "Actions", hidden: true }]}>
          {data.items.map((token) => {
            const rowBusy = busy === token.name;
            return (
              <tr key={token.id} className={token.revokedAt ? styles.off : undefined} data-token={token.name}>
                <td className={styles.person}>
                  <strong className={styles.tokenName}>{token.name}</strong>
                  <code className="muted" title="The first characters of the secret">
                    {token.prefix}…
                  </code>
                </td>
                <td className="nowrap" data-label="Role">
                  {token.role}
                </td>
                <td data-label="Tools">
                  <div className={styles.chips}>
                    {token.tools.map((tool) => (
                      <span key={tool} className={styles.chip}>
                        {tool}
                      </span>
                    ))}
                  </div>
                </td>
                <td className="nowrap" data-label="Created">
                  <div>
                    <Time at={token.createdAt} />
                    <div className="cell-label">by {token.createdBy}</div>
                  </div>
                </td>
                <td className="nowrap" data-label="Last used">{token.lastUsedAt ? <Time at={token.lastUsedAt} /> : <span className="muted">never</span>}</td>
                <td className="nowrap" data-label="Expires">
                  {token.expiresAt ? (
                    <div className="cell-stack">
                      <Time at={token.expiresAt} />
                      {token.expiry === "soon" && !token.revokedAt && <span className="cell-label attention">within a week</span>}
                    </div>
                  ) : (
                    <span className="muted">never</span>
                  )}
                </td>
                <td className="nowrap" data-label="Status">
                  <div className="cell-stack">
                    <span className={`badge ${token.revokedAt || token.expiry === "expired" ? "status-bad" : "status-good"}`}>{token.revokedAt ? "REVOKED" : token.expiry === "expired" ? "EXPIRED" : "ACTIVE"}</span>
                    {token.revokedAt && <Time at={token.revokedAt} />}
                  </div>
                </td>
                <td className={styles.actions}>
                  {token.revokedAt ? null : confirming === token.name ? (
                    <div className={styles.confirm} role="group" aria-label={`Confirm revoking ${token.name}`}>
                      <span>Revoke “{token.name}”? Its next request gets 401; this cannot be undone.</span>
                      <div>
                        <button type="button" className={`button small ${styles.dangerSolid}`} disabled={rowBusy} onClick={() => void revoke(token)}>
                          {rowBusy ? "Revoking…" : "Yes, revoke"}
                        </button>
                        <button type="button" className="button small" disabled={rowBusy} onClick={() => setConfirming(null)}>
                          Cancel
                        </button>
                      </div>
                    </div>
                  ) : (
                    <button type="button" className={`button small ${styles.danger}`} onClick={() => setConfirming(token.name)}>
                      Revoke
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

/** A lifetime as people read it ("90 days", "12 hours"). */
function lifetimeInWords(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400} day${seconds === 86_400 ? "" : "s"}`;
  if (seconds % 3_600 === 0) return `${seconds / 3_600} hour${seconds === 3_600 ? "" : "s"}`;
  return formatDuration(seconds);
}

/** Tokens that stop working within a week: named at the top, so nobody learns it from an agent's 401. */
function ExpiringSoon({ tokens }: { tokens: TAdminToken[] }) {
  const soon = tokens.filter((t) => t.expiry === "soon" && !t.revokedAt);
  if (soon.length === 0) return null;
  return (
    <p className="banner warn" role="status" data-testid="tokens-expiring">
      {soon.length === 1 ? "One token stops working" : `${soon.length} tokens stop working`} within a week:{" "}
      {soon.map((t, i) => (
        <span key={t.id}>
          {i > 0 ? ", " : ""}
          <strong>{t.name}</strong> (<Time at={t.expiresAt} />)
        </span>
      ))}
      . Create a new token for {soon.length === 1 ? "its agent" : "their agents"} before then.
    </p>
  );
}

/** The lifetime new tokens get unless their creator picks one: days, or never. */
function DefaultLifetime({ seconds, onSaved }: { seconds: number | null; onSaved: (text: string) => Promise<void> }) {
  const [days, setDays] = useState(seconds === null ? "" : String(Math.round(seconds / 86_400)));
  const [failure, setFailure] = useState<string | null>(null);
  const [sending, setSending] = useState(false);
  async function save(value: number | null) {
    setSending(true);
    setFailure(null);
    try {
      const result = await postParsed(DashboardPath.setTokenLifetime, z.object({ defaultLifetimeSec: z.number().int().nullable() }), { defaultLifetimeSec: value });
      await onSaved(result.defaultLifetimeSec === null ? "New tokens no longer expire unless their creator picks a lifetime." : `New tokens now expire after ${lifetimeInWords(result.defaultLifetimeSec)}; existing tokens keep theirs.`);
    } catch (error) {
      setFailure(errorMessage(error));
    } finally {
      setSending(false);
    }
  }
  return (
    <section className="panel" aria-labelledby="token-lifetime-title">
      <h2 id="token-lifetime-title">How long new tokens live</h2>
      <p className={styles.lead}>
        {seconds === null ? "New tokens do not expire unless their creator picks a lifetime." : `New tokens expire after ${lifetimeInWords(seconds)} unless their creator picks another lifetime.`} An expired token is refused
        like a revoked one; the table flags tokens a week before they expire.
      </p>
      <form
        aria-label="Default token lifetime"
        onSubmit={(e) => {
          e.preventDefault();
          const n = Number(days);
          if (!Number.isInteger(n) || n < 1) return setFailure("Enter a whole number of days (1 or more), or choose “Never expire”.");
          void save(n * 86_400);
        }}
      >
        <div className={styles.fields}>
          <div className={styles.field}>
            <label htmlFor="token-lifetime-days">Days</label>
            <input id="token-lifetime-days" type="number" min={1} max={1830} inputMode="numeric" value={days} onChange={(e) => setDays(e.target.value)} placeholder="90" />
          </div>
        </div>
        <div className={styles.formActions}>
          <button type="submit" className="button" disabled={sending}>
            Save the lifetime
          </button>
          <button type="button" className="link-button" disabled={sending || seconds === null} onClick={() => void save(null)}>
            Never expire
          </button>
        </div>
        <FormError message={failure} />
      </form>
    </section>
  );
}

/** Name, role, lifetime and tools (checkboxes from the tool table); the server answers the secret once. */
function CreateTokenForm({ tools, defaultLifetimeSec, onCreated }: { tools: string[]; defaultLifetimeSec: number | null; onCreated: (created: TCreatedAdminToken) => Promise<void> }) {
  const [name, setName] = useState("");
  const [role, setRole] = useState<TokenRole>("agent");
  const [lifetime, setLifetime] = useState<"default" | "never" | "days">("default");
  const [days, setDays] = useState("30");
  const [picked, setPicked] = useState<string[]>([]);
  const [sending, setSending] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (picked.length === 0) {
      setFailure("Pick at least one tool the token may use.");
      return;
    }
    const n = Number(days);
    if (lifetime === "days" && (!Number.isInteger(n) || n < 1)) {
      setFailure("Enter the token's lifetime as a whole number of days (1 or more).");
      return;
    }
    setSending(true);
    setFailure(null);
    try {
      const expires = lifetime === "default" ? {} : { expiresInSec: lifetime === "never" ? null : n * 86_400 };
      const result = await postParsed(DashboardPath.createToken, ZCreatedAdminToken, { name, role, tools: picked, ...expires });
      setName("");
      setRole("agent");
      setPicked([]);
      await onCreated(result);
    } catch (error) {
      setFailure(errorMessage(error));
    } finally {
      setSending(false);
    }
  }

  function toggle(tool: string, on: boolean) {
    setPicked((p) => (on ? [...p, tool] : p.filter((t) => t !== tool)));
  }

  return (
    <section className={`panel ${styles.createPanel}`} aria-labelledby="create-token-title">
      <h2 id="create-token-title">Create a token</h2>
      <p className={styles.lead}>One token per agent or worker. Its secret is shown once, here, right after you create it.</p>
      {tools.length === 0 ? (
        <p className="notice">
          The tool table has no tools yet, and a token must name at least one. Add the tools on the <Link href="/admin/tools">Tools</Link> page first.
        </p>
      ) : (
        <form onSubmit={(e) => void submit(e)} aria-label="Create a token">
          <div className={styles.fields}>
            <div className={styles.field}>
              <label htmlFor="new-token-name">Name</label>
              <input
                id="new-token-name"
                type="text"
                required
                autoComplete="off"
                pattern="[a-z0-9][a-z0-9_.\-]{0,63}"
                title="1-64 lower-case letters, digits, '_', '.' or '-', starting with a letter or digit"
                value={name}
                onChange={(e) => setName(e.target.value)}
                placeholder="support-agent"
                aria-describedby="new-token-name-hint"
              />
              <p id="new-token-name-hint" className={styles.hint}>
                The agent&rsquo;s name on its runs and in the audit log: lower-case letters, digits, <code>-</code> <code>_</code> <code>.</code>
              </p>
            </div>
            <fieldset className={styles.field}>
              <legend className={styles.fieldLegend}>Role</legend>
              <div className={styles.roles}>
                {(Object.keys(TOKEN_ROLE_HINTS) as TokenRole[]).map((r) => (
                  <label key={r} className="choice">
                    <input type="radio" name="token-role" value={r} checked={role === r} onChange={() => setRole(r)} />
                    {r}
                  </label>
                ))}
              </div>
              <p className={styles.hint}>{TOKEN_ROLE_HINTS[role]}</p>
            </fieldset>
            <fieldset className={styles.field}>
              <legend className={styles.fieldLegend}>Expires</legend>
              <div className={styles.lifetimes}>
                <label className="choice">
                  <input type="radio" name="token-lifetime" checked={lifetime === "default"} onChange={() => setLifetime("default")} />
                  {defaultLifetimeSec === null ? "never (the default)" : `after ${lifetimeInWords(defaultLifetimeSec)} (the default)`}
                </label>
                {defaultLifetimeSec !== null && (
                  <label className="choice">
                    <input type="radio" name="token-lifetime" checked={lifetime === "never"} onChange={() => setLifetime("never")} />
                    never
                  </label>
                )}
                <label className="choice">
                  <input type="radio" name="token-lifetime" checked={lifetime === "days"} onChange={() => setLifetime("days")} />
                  after
                  <input type="number" aria-label="Days until it expires" min={1} max={1830} className={styles.days} value={days} onChange={(e) => { setDays(e.target.value); setLifetime("days"); }} />
                  days
                </label>
              </div>
            </fieldset>
          </div>
          <fieldset>
            <div className={styles.legendRow}>
              <legend>
                Tools <span className="muted small">({picked.length} of {tools.length})</span>
              </legend>
              <button type="button" className="link-button small" onClick={() => setPicked(tools)}>
                Select all
              </button>
              <button type="button" className="link-button small" onClick={() => setPicked([])}>
                Clear
              </button>
            </div>
            <div className={styles.tools}>
              {tools.map((tool) => (
                <label key={tool} className="choice">
                  <input type="checkbox" checked={picked.includes(tool)} onChange={(e) => toggle(tool, e.target.checked)} />
                  <code>{tool}</code>
                </label>
              ))}
            </div>
          </fieldset>
          <div className={styles.formActions}>
            <button type="submit" className="button primary" disabled={sending}>
              {sending ? "Creating…" : "Create token"}
            </button>
          </div>
          <FormError message={failure} />
        </form>
      )}
    </section>
  );
}
