/**
 * Throttling of password sign-in, on rate-limiter-flexible. Framework-free: the HTTP wrapper is
 * lib/server/auth/throttled-sign-in.ts. Built so that no stranger can turn it into a lockout of a real
 * person: anyone can type an email, so what a wrong guess blocks is the guesser's own way in.
 *
 * - Per account and client (a pair): `accountFailures` wrong passwords for one account from one
 *   client within `accountWindowSeconds` block that pair for a short time that doubles with each
 *   lockout (`blockSeconds`, 2x, 4x, ... up to `maxBlockSeconds`). The account's owner on another
 *   address, or holding proof of an earlier good sign-in, is not blocked. A success clears the pair.
 * - Per account, all clients together: past `accountSlowAfter` wrong passwords within the window the
 *   account is slowed, never blocked: attempts without proof are let through one per `slowSeconds`
 *   (the others are told to retry within that time), so guessing from many addresses stays slow.
 *   Clients on their first attempt at the account in the window take turns apart from the ones
 *   guessing again, so a new browser of the owner does not queue behind the attack.
 * - Proof of a previous good sign-in (a signed cookie the wrapper sets, naming the account and a
 *   device): its attempts count under the device instead of the address and skip the slowing and
 *   the per-client limit, so the owner's own browser signs in during an attack.
 * - Per client: `clientFailures` wrong passwords within `clientWindowSeconds` from one address refuse
 *   that address until the window ends. Only failures count (a success gives its point back), so many
 *   people signing in behind one address (an office, the e2e suites on 127.0.0.1) are never refused.
 *   An unknown address (the socket's peer could not be read) is not limited per client, since every
 *   such request would share one bucket that a stranger could fill.
 * - A point is taken BEFORE the password is checked (an atomic increment in the store) and given back
 *   afterwards when it should not count; so fifty parallel guesses get `accountFailures` answers, not
 *   fifty.
 * - Stores: on PostgreSQL, RateLimiterPostgres on its own `pg` pool, so every app instance shares the
 *   counts; it creates its table (SIGN_IN_THROTTLE_TABLE) if missing, outside the Prisma schema,
 *   since the rows are disposable counters that expire. On SQLite (one machine, one server process)
 *   RateLimiterMemory: the counts live in the server process and a restart forgets them.
 * - Keys are sha256 of the email, so the limiter's table never holds an address.
 */
import { createHash } from "node:crypto";
import pg from "pg";
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import * as z from "zod";

/** The table RateLimiterPostgres keeps sign-in counts in (created on first use). */
export const SIGN_IN_THROTTLE_TABLE = "sign_in_throttle";

const seconds = (fallback: number) => z.coerce.number().int().min(1).max(86_400).default(fallback);

/** The limits; each can be set from the environment (SAGABOARD_SIGN_IN_<NAME in capitals>). */
export const ZSignInLimits = z.object({
  /** Wrong passwords for one account from one client (or device) within the window that block that pair (5). */
  accountFailures: z.coerce.number().int().min(1).max(1000).default(5),
  /** The account's counting window, in seconds (15 minutes). */
  accountWindowSeconds: seconds(15 * 60),
  /** The first block of an account-and-client pair, in seconds (1 minute); each further lockout doubles it. */
  blockSeconds: seconds(60),
  /** The longest block of a pair, in seconds (15 minutes). */
  maxBlockSeconds: seconds(15 * 60),
  /** How long lockouts keep counting toward a longer block, in seconds (1 day). */
  lockoutMemorySeconds: seconds(24 * 60 * 60),
  /** Wrong passwords for one account from all clients within the window after which it is slowed (20). */
  accountSlowAfter: z.coerce.number().int().min(1).max(100_000).default(20),
  /** While slowed, attempts without proof of a previous sign-in are let through one per this many seconds (2). */
  slowSeconds: seconds(2),
  /** Wrong passwords from one client address within its window that refuse it (100). */
  clientFailures: z.coerce.number().int().min(1).max(100_000).default(100),
  /** The client's counting window, in seconds (15 minutes). */
  clientWindowSeconds: seconds(15 * 60),
});
/** The limits. */
export type TSignInLimits = z.infer<typeof ZSignInLimits>;

const ENV_NAMES: Record<keyof TSignInLimits, string> = {
  accountFailures: "SAGABOARD_SIGN_IN_ACCOUNT_FAILURES",
  accountWindowSeconds: "SAGABOARD_SIGN_IN_ACCOUNT_WINDOW_SECONDS",
  blockSeconds: "SAGABOARD_SIGN_IN_BLOCK_SECONDS",
  maxBlockSeconds: "SAGABOARD_SIGN_IN_MAX_BLOCK_SECONDS",
  lockoutMemorySeconds: "SAGABOARD_SIGN_IN_LOCKOUT_MEMORY_SECONDS",
  accountSlowAfter: "SAGABOARD_SIGN_IN_ACCOUNT_SLOW_AFTER",
  slowSeconds: "SAGABOARD_SIGN_IN_SLOW_SECONDS",
  clientFailures: "SAGABOARD_SIGN_IN_CLIENT_FAILURES",
  clientWindowSeconds: "SAGABOARD_SIGN_IN_CLIENT_WINDOW_SECONDS",
};

/** The limits the environment sets (defaults for what it leaves out); throws naming a bad variable. */
export function signInLimitsFromEnv(env: NodeJS.ProcessEnv = process.env): TSignInLimits {
  const raw = Object.fromEntries(Object.entries(ENV_NAMES).map(([field, name]) => [field, env[name]?.trim() || undefined]));
  const parsed = ZSignInLimits.safeParse(raw);
  if (!parsed.success) {
    const list = parsed.error.issues.map((i) => `${ENV_NAMES[i.path[0] as keyof TSignInLimits] ?? String(i.path[0])}: ${i.message}`).join("; ");
    throw new Error(`Sign-in limits are invalid (${list}). Set whole numbers of attempts or seconds, or unset them for the defaults.`);
  }
  return parsed.data;
}

/** What a lockout hook is told (no email: the hook gets that separately and must keep it out of logs). */
export interface SignInLockout {
  /** Wrong passwords that caused it. */
  failures: number;
  /** The window they fell in, in seconds. */
  windowSeconds: number;
  /** How long the account is blocked for the client that guessed, in seconds. */
  blockSeconds: number;
  /** Which lockout of this account-and-client pair this is within the lockout memory (1, 2, ...). */
  lockout: number;
}

/** Where the counts live, and what to do when an account is blocked. */
export interface SignInThrottleOptions {
  /** The limits (default: signInLimitsFromEnv()). */
  limits?: TSignInLimits;
  /** A pg pool for the shared PostgreSQL store; none: this process's memory. */
  postgresPool?: pg.Pool;
  /** Called after an account is blocked (e.g. to audit it); errors are logged, never answered. */
  onLockout?: (email: string, lockout: SignInLockout) => Promise<void>;
}

/** Why an attempt is refused before its password is checked: the pair is blocked, the account slowed, the client refused. */
export type SignInRefusal = "account" | "slowed" | "client";

/** Who is signing in, as far as the throttle can tell. */
export interface SignInClient {
  /** The client's address (lib/server/auth/client-address.ts), or "unknown". */
  address: string;
  /** A device id from verified proof of an earlier good sign-in to this account; null: none. */
  device: string | null;
}

/** How an attempt the throttle let through ended. */
export const SignInOutcome = {
  /** The password was right: the pair's counts are cleared and the other points given back. */
  succeeded: "succeeded",
  /** The password was wrong (or the account unknown): both points stay; the account may be blocked. */
  failed: "failed",
  /** No password was checked (a missing CSRF token, a disabled account): both points are given back. */
  neutral: "neutral",
} as const;
export type SignInOutcome = (typeof SignInOutcome)[keyof typeof SignInOutcome];

/** An attempt the throttle let through; report its outcome once. */
export interface SignInAttempt {
  /** Records how the attempt ended. */
  finish: (outcome: SignInOutcome) => Promise<void>;
}

/** The throttle's answer before a password is checked: a value, not an exception. */
export type SignInGate = { allowed: true; attempt: SignInAttempt } | { allowed: false; reason: SignInRefusal; retryAfterSeconds: number };

/** The throttle's view of one email: trimmed and lower-cased, as checkCredentials looks it up. */
export function normalizeSignInEmail(email: string): string {
  return email.trim().toLowerCase();
}

function digest(value: string): string {
  return createHash("sha256").update(value).digest("hex").slice(0, 40);
}

/** The key one email's counts live under (and that proof of a previous sign-in names): never the email itself. */
export function signInAccountKey(email: string): string {
  return digest(`account:${normalizeSignInEmail(email)}`);
}

/** Rejections with a RateLimiterRes are "over the limit"; anything else is a store failure and is thrown. */
async function take(limiter: RateLimiterAbstract, key: string): Promise<RateLimiterRes | { refusedForMs: number }> {
  try {
    return await limiter.consume(key);
  } catch (e) {
    if (e instanceof RateLimiterRes) return { refusedForMs: e.msBeforeNext };
    throw e;
  }
}

const toSeconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/** The throttle; one per app process (they share counts through PostgreSQL when given a pool). */
export class SignInThrottle {
  /** The limits in force. */
  readonly limits: TSignInLimits;
  private readonly pairFailures: RateLimiterAbstract;
  private readonly pairLockouts: RateLimiterAbstract;
  private readonly accountFailures: RateLimiterAbstract;
  private readonly slowedSlots: RateLimiterAbstract;
  private readonly clientFailures: RateLimiterAbstract;
  private readonly ready: Promise<void>;
  private readonly onLockout: SignInThrottleOptions["onLockout"];
  private readonly pendingHooks = new Set<Promise<void>>();

  constructor(options: SignInThrottleOptions = {}) {
    const limits = options.limits ?? signInLimitsFromEnv();
    this.limits = limits;
    this.onLockout = options.onLockout;
    const specs = {
      pairFailures: { keyPrefix: "pair", points: limits.accountFailures, duration: limits.accountWindowSeconds },
      // Only counted, never refused: its count is which lockout of the pair this is.
      pairLockouts: { keyPrefix: "pairlockouts", points: 1_000_000, duration: limits.lockoutMemorySeconds },
      // Only counted here; begin() compares the count with accountSlowAfter.
      accountFailures: { keyPrefix: "acctall", points: 1_000_000, duration: limits.accountWindowSeconds },
      slowedSlots: { keyPrefix: "slowed", points: 1, duration: limits.slowSeconds },
      clientFailures: { keyPrefix: "client", points: limits.clientFailures, duration: limits.clientWindowSeconds },
    };
    const pool = options.postgresPool;
    const made: Promise<void>[] = [];
    const limiter = (spec: (typeof specs)[keyof typeof specs]): RateLimiterAbstract => {
      if (!pool) return new RateLimiterMemory(spec);
      // The limiters share one table: only the first creates it (concurrent CREATE TABLE IF NOT
      // EXISTS races on PostgreSQL); the others are used only after it is ready (begin awaits it).
      const tableCreated = made.length > 0;
      let created!: RateLimiterPostgres;
      made.push(
        new Promise<void>((resolve, reject) => {
          created = new RateLimiterPostgres({ ...spec, storeClient: pool, storeType: "pool", tableName: SIGN_IN_THROTTLE_TABLE, tableCreated }, (err?: Error) => (err ? reject(err) : resolve()));
        }),
      );
      return created;
    };
    this.pairFailures = limiter(specs.pairFailures);
    this.pairLockouts = limiter(specs.pairLockouts);
    this.accountFailures = limiter(specs.accountFailures);
    this.slowedSlots = limiter(specs.slowedSlots);
    this.clientFailures = limiter(specs.clientFailures);
    this.ready = Promise.all(made).then(() => undefined);
    // Unhandled until someone awaits it; begin() does.
    this.ready.catch(() => undefined);
  }

  /**
   * Takes points from the client, the account-and-client pair and the account before the password
   * is checked. Refused: nothing was taken. `client` is an address (or any stable label for the
   * caller), or the address and verified proof of an earlier sign-in.
   */
  async begin(email: string, client: string | SignInClient): Promise<SignInGate> {
    await this.ready;
    const { address, device } = typeof client === "string" ? { address: client, device: null } : client;
    const taken: { limiter: RateLimiterAbstract; key: string }[] = [];
    const giveBack = () => Promise.all(taken.map(({ limiter, key }) => limiter.reward(key, 1)));

    // Proof holders are limited by their device; an unknown address would be one bucket for everyone.
    const clientKey = device === null && address !== "unknown" ? digest(`client:${address}`) : null;
    if (clientKey) {
      const clientTaken = await take(this.clientFailures, clientKey);
      if ("refusedForMs" in clientTaken) return { allowed: false, reason: "client", retryAfterSeconds: toSeconds(clientTaken.refusedForMs) };
      taken.push({ limiter: this.clientFailures, key: clientKey });
    }

    const normalized = normalizeSignInEmail(email);
    const accountKey = normalized ? signInAccountKey(normalized) : null;
    const pairKey = accountKey ? digest(`pair:${accountKey}:${device === null ? `address:${address}` : `device:${device}`}`) : null;
    let pairTaken: RateLimiterRes | null = null;
    if (accountKey && pairKey) {
      const pair = await take(this.pairFailures, pairKey);
      if ("refusedForMs" in pair) {
        // The password is not checked, so this does not count against the client.
        await giveBack();
        return { allowed: false, reason: "account", retryAfterSeconds: toSeconds(pair.refusedForMs) };
      }
      pairTaken = pair;
      taken.push({ limiter: this.pairFailures, key: pairKey });
      const account = await take(this.accountFailures, accountKey);
      if ("refusedForMs" in account) throw new Error("unreachable: the account-wide count never refuses");
      taken.push({ limiter: this.accountFailures, key: accountKey });
      if (device === null && account.consumedPoints > this.limits.accountSlowAfter) {
        // Turns are shared apart: clients trying this account for the first time in the window (the
        // owner on a new browser) do not queue behind the addresses that keep guessing.
        const slot = await take(this.slowedSlots, `${pair.consumedPoints === 1 ? "first" : "again"}:${accountKey}`);
        if ("refusedForMs" in slot) {
          await giveBack();
          return { allowed: false, reason: "slowed", retryAfterSeconds: toSeconds(slot.refusedForMs) };
        }
      }
    }

    let finished = false;
    const finish = async (outcome: SignInOutcome): Promise<void> => {
      if (finished) throw new Error("A sign-in attempt's outcome was reported twice; report it once, after next-auth answers.");
      finished = true;
      if (outcome === SignInOutcome.failed) {
        // Exactly one attempt reaches the last allowed point, so one lockout per pair and window.
        if (pairKey && pairTaken && pairTaken.consumedPoints >= this.limits.accountFailures) await this.lockOut(pairKey, normalized);
        return;
      }
      if (outcome === SignInOutcome.succeeded && pairKey) {
        // The account-wide count stays: an attack elsewhere goes on whoever signs in.
        await Promise.all([this.pairFailures.delete(pairKey), this.pairLockouts.delete(pairKey)]);
        await Promise.all(taken.filter((t) => t.limiter !== this.pairFailures).map(({ limiter, key }) => limiter.reward(key, 1)));
        return;
      }
      await giveBack();
    };
    return { allowed: true, attempt: { finish } };
  }

  /** Resolves when every lockout hook started so far has finished (tests, graceful shutdown). */
  async idle(): Promise<void> {
    while (this.pendingHooks.size > 0) await Promise.all([...this.pendingHooks]);
  }

  private async lockOut(pairKey: string, email: string): Promise<void> {
    const counted = await take(this.pairLockouts, pairKey);
    const lockout = "refusedForMs" in counted ? 1 : counted.consumedPoints;
    const blockSeconds = Math.min(this.limits.blockSeconds * 2 ** Math.min(lockout - 1, 30), this.limits.maxBlockSeconds);
    await this.pairFailures.block(pairKey, blockSeconds);
    if (!this.onLockout) return;
    // Not awaited: the answer must take as long whether or not the account exists (the hook looks it up).
    const hook = this.onLockout(email, { failures: this.limits.accountFailures, windowSeconds: this.limits.accountWindowSeconds, blockSeconds, lockout })
      .catch((e: unknown) => console.error("[sign-in] recording a lockout failed:", e))
      .finally(() => this.pendingHooks.delete(hook));
    this.pendingHooks.add(hook);
  }
}
