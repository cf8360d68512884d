/**
 * Throttling of password sign-in, per account (the normalized email) and per client (an IP address),
 * on rate-limiter-flexible. Framework-free: the HTTP wrapper is lib/auth/throttled-sign-in.ts.
 *
 * - Per account: `accountFailures` wrong passwords within `accountWindowSeconds` block the account
 *   for a short time that doubles with each lockout (`blockSeconds`, 2x, 4x, ... up to
 *   `maxBlockSeconds`). The block is short on purpose: anyone can type an email, so a stranger must
 *   not be able to lock a real person out for long. A successful sign-in clears the account's counts.
 * - Per client: `clientFailures` wrong passwords within `clientWindowSeconds` from one address refuse
 *   that address until the window ends. Only failures count (a success gives its point back), so many
 *   people signing in behind one address (an office, the e2e suites on 127.0.0.1) are never refused.
 * - A point is taken BEFORE the password is checked (an atomic increment in the store) and given back
 *   afterwards when it should not count; so fifty parallel guesses get `accountFailures` answers, not
 *   fifty. (Such a burst can be told a Retry-After up to the window's end: the block replaces that once
 *   the last allowed guess has failed.)
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
export const SignInLimitsSchema = z.object({
  /** Wrong passwords for one account within the window that block it (5). */
  accountFailures: z.coerce.number().int().min(1).max(1000).default(5),
  /** The account's counting window, in seconds (15 minutes). */
  accountWindowSeconds: seconds(15 * 60),
  /** The first block of an account, in seconds (1 minute); each further lockout doubles it. */
  blockSeconds: seconds(60),
  /** The longest block of an account, in seconds (15 minutes). */
  maxBlockSeconds: seconds(15 * 60),
  /** How long lockouts keep counting toward a longer block, in seconds (1 day). */
  lockoutMemorySeconds: seconds(24 * 60 * 60),
  /** Wrong passwords from one client address within its window that refuse it (100). */
  clientFailures: z.coerce.number().int().min(1).max(100_000).default(100),
  /** The client's counting window, in seconds (15 minutes). */
  clientWindowSeconds: seconds(15 * 60),
});
/** The limits. */
export type SignInLimits = z.infer<typeof SignInLimitsSchema>;

const ENV_NAMES: Record<keyof SignInLimits, string> = {
  accountFailures: "SAGABOARD_SIGN_IN_ACCOUNT_FAILURES",
  accountWindowSeconds: "SAGABOARD_SIGN_IN_ACCOUNT_WINDOW_SECONDS",
  blockSeconds: "SAGABOARD_SIGN_IN_BLOCK_SECONDS",
  maxBlockSeconds: "SAGABOARD_SIGN_IN_MAX_BLOCK_SECONDS",
  lockoutMemorySeconds: "SAGABOARD_SIGN_IN_LOCKOUT_MEMORY_SECONDS",
  clientFailures: "SAGABOARD_SIGN_IN_CLIENT_FAILURES",
  clientWindowSeconds: "SAGABOARD_SIGN_IN_CLIENT_WINDOW_SECONDS",
};

/** The limits the environment sets (defaults for what it leaves out); throws naming a bad variable. */
export function signInLimitsFromEnv(env: NodeJS.ProcessEnv = process.env): SignInLimits {
  const raw = Object.fromEntries(Object.entries(ENV_NAMES).map(([field, name]) => [field, env[name]?.trim() || undefined]));
  const parsed = SignInLimitsSchema.safeParse(raw);
  if (!parsed.success) {
    const list = parsed.error.issues.map((i) => `${ENV_NAMES[i.path[0] as keyof SignInLimits] ?? String(i.path[0])}: ${i.message}`).join("; ");
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
  /** How long the account is blocked, in seconds. */
  blockSeconds: number;
  /** Which lockout of the account this is within the lockout memory (1, 2, ...). */
  lockout: number;
}

/** Where the counts live, and what to do when an account is blocked. */
export interface SignInThrottleOptions {
  /** The limits (default: signInLimitsFromEnv()). */
  limits?: SignInLimits;
  /** A pg pool for the shared PostgreSQL store; none: this process's memory. */
  postgresPool?: pg.Pool;
  /** Called after an account is blocked (e.g. to audit it); errors are logged, never answered. */
  onLockout?: (email: string, lockout: SignInLockout) => Promise<void>;
}

/** Why an attempt is refused before its password is checked. */
export type SignInRefusal = "account" | "client";

/** How an attempt the throttle let through ended. */
export const SignInOutcome = {
  /** The password was right: the account's counts are cleared and the client's point given back. */
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
  readonly limits: SignInLimits;
  private readonly accountFailures: RateLimiterAbstract;
  private readonly accountLockouts: RateLimiterAbstract;
  private readonly clientFailures: RateLimiterAbstract;
  private readonly ready: Promise<void>;
  private readonly onLockout: SignInThrottleOptions["onLockout"];
  private readonly pendingHooks = new Set<Promise<void>>();

  constructor(options: SignInThrottleOptions = {}) {
    const limits = options.limits ?? signInLimitsFromEnv();
    this.limits = limits;
    this.onLockout = options.onLockout;
    const specs = {
      accountFailures: { keyPrefix: "acct", points: limits.accountFailures, duration: limits.accountWindowSeconds },
      // Only counted, never refused: its count is which lockout this is.
      accountLockouts: { keyPrefix: "lockouts", points: 1_000_000, duration: limits.lockoutMemorySeconds },
      clientFailures: { keyPrefix: "client", points: limits.clientFailures, duration: limits.clientWindowSeconds },
    };
    const pool = options.postgresPool;
    if (pool) {
      const made: Promise<void>[] = [];
      const postgres = (spec: (typeof specs)[keyof typeof specs]) => {
        let limiter!: RateLimiterPostgres;
        made.push(
          new Promise<void>((resolve, reject) => {
            limiter = new RateLimiterPostgres({ ...spec, storeClient: pool, storeType: "pool", tableName: SIGN_IN_THROTTLE_TABLE }, (err?: Error) => (err ? reject(err) : resolve()));
          }),
        );
        return limiter;
      };
      this.accountFailures = postgres(specs.accountFailures);
      this.accountLockouts = postgres(specs.accountLockouts);
      this.clientFailures = postgres(specs.clientFailures);
      this.ready = Promise.all(made).then(() => undefined);
    } else {
      this.accountFailures = new RateLimiterMemory(specs.accountFailures);
      this.accountLockouts = new RateLimiterMemory(specs.accountLockouts);
      this.clientFailures = new RateLimiterMemory(specs.clientFailures);
      this.ready = Promise.resolve();
    }
    // Unhandled until someone awaits it; begin() does.
    this.ready.catch(() => undefined);
  }

  /**
   * Takes a point from the client and from the account (when an email is given) before the password
   * is checked. Refused: nothing was taken. `client` is an address, or any stable label for the caller.
   */
  async begin(email: string, client: string): Promise<SignInGate> {
    await this.ready;
    const clientKey = digest(`client:${client}`);
    const clientTaken = await take(this.clientFailures, clientKey);
    if ("refusedForMs" in clientTaken) return { allowed: false, reason: "client", retryAfterSeconds: toSeconds(clientTaken.refusedForMs) };

    const normalized = normalizeSignInEmail(email);
    const accountKey = normalized ? digest(`account:${normalized}`) : null;
    const accountTaken = accountKey ? await take(this.accountFailures, accountKey) : null;
    if (accountTaken && "refusedForMs" in accountTaken) {
      // The password is not checked, so this does not count against the client.
      await this.clientFailures.reward(clientKey, 1);
      return { allowed: false, reason: "account", retryAfterSeconds: toSeconds(accountTaken.refusedForMs) };
    }

    let finished = false;
    const finish = async (outcome: SignInOutcome): Promise<void> => {
      if (finished) throw new Error("A sign-in attempt's outcome was reported twice; report it once, after next-auth answers.");
      finished = true;
      if (outcome === SignInOutcome.failed) {
        // Exactly one attempt reaches the last allowed point, so one lockout per window.
        if (accountKey && accountTaken && accountTaken.consumedPoints >= this.limits.accountFailures) await this.lockOut(accountKey, normalized);
        return;
      }
      await this.clientFailures.reward(clientKey, 1);
      if (!accountKey) return;
      if (outcome === SignInOutcome.succeeded) {
        await Promise.all([this.accountFailures.delete(accountKey), this.accountLockouts.delete(accountKey)]);
      } else {
        await this.accountFailures.reward(accountKey, 1);
      }
    };
    return { allowed: true, attempt: { finish } };
  }

  /** Resolves when every lockout hook started so far has finished (tests, graceful shutdown). */
  async idle(): Promise<void> {
    while (this.pendingHooks.size > 0) await Promise.all([...this.pendingHooks]);
  }

  private async lockOut(accountKey: string, email: string): Promise<void> {
    const counted = await take(this.accountLockouts, accountKey);
    const lockout = "refusedForMs" in counted ? 1 : counted.consumedPoints;
    const blockSeconds = Math.min(this.limits.blockSeconds * 2 ** Math.min(lockout - 1, 30), this.limits.maxBlockSeconds);
    await this.accountFailures.block(accountKey, blockSeconds);
    if (!this.onLockout) return;
    // Not awaited: the answer must take as long whether or not the account exists (the hook looks it up).
    const hook = this.onLockout(email, { failures: this.limits.accountFailures, windowSeconds: this.limits.accountWindowSeconds, blockSeconds, lockout })
      .catch((e: unknown) => console.error("[sign-in] recording a lockout failed:", e))
      .finally(() => this.pendingHooks.delete(hook));
    this.pendingHooks.add(hook);
  }
}
