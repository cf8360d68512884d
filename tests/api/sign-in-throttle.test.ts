/**
 * Sign-in throttling, end to end in-process: the throttle wrapper (lib/server/auth/throttled-sign-in.ts) in
 * front of next-auth itself (its public handler with our authOptions: CSRF token, authorize,
 * checkCredentials, bcrypt, the session row), on a real database. Short limits (3 failures, a 1 s
 * first block) keep it quick. The route file only binds these together; tests/e2e/sign-in-throttle.spec.ts
 * drives it over HTTP. On PostgreSQL two throttles on two pools stand for two app instances.
 * The lockout figure (the owner's time to sign in while 20 addresses fail its password) runs with the
 * default limits for SAGABOARD_LOCKOUT_ATTACK_SECONDS (10 here; 120 for the full two minutes).
 */
import http from "node:http";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import NextAuth from "next-auth";
import { authOptions } from "@/lib/server/auth/options";
import { SIGN_IN_THROTTLED_EVENT, recordSignInLockout } from "@/lib/server/auth/record-sign-in-lockout";
import { ZSignInLimits, SignInThrottle, type TSignInLimits } from "@/lib/server/auth/sign-in-throttle";
import { clientAddress, parseTrustedProxies } from "@/lib/server/auth/client-address";
import { SIGN_IN_DEVICE_COOKIE } from "@/lib/server/auth/sign-in-device";
import { installPeerStamp, PEER_HEADER } from "@/lib/server/auth/socket-address";
import { signInClientAddress, throttleCredentialsSignIn, type FetchHandler } from "@/lib/server/auth/throttled-sign-in";
import { createUser } from "@/lib/server/users/create-user";
import { openPostgresPool } from "@/lib/core/db/postgres-pool";
import { useTestDatabase } from "./api-test-kit";
import { testStoreKind } from "../support/test-database";

process.env.NEXTAUTH_URL = "http://127.0.0.1:3000";
process.env.NEXTAUTH_SECRET = "sign-in-throttle-test-secret-long-enough";
const getPrisma = useTestDatabase("sign-in-throttle");
const postgres = testStoreKind() === "postgresql";
const limits: TSignInLimits = ZSignInLimits.parse({ accountFailures: 3, accountWindowSeconds: 60, blockSeconds: 1, maxBlockSeconds: 2, lockoutMemorySeconds: 60, clientFailures: 8, clientWindowSeconds: 60 });
const PASSWORD = "correct horse battery staple";
const pools: pg.Pool[] = [];
const throttles: SignInThrottle[] = [];

/** A throttle as one app instance makes it: in memory on SQLite, in the shared table on PostgreSQL. */
async function newThrottle(override: Partial<TSignInLimits> = {}): Promise<SignInThrottle> {
  const pool = postgres ? openPostgresPool(process.env.DATABASE_URL!, { max: 2 }) : undefined;
  if (pool) pools.push(pool);
  const prisma = await getPrisma();
  const throttle = new SignInThrottle({ limits: { ...limits, ...override }, ...(pool ? { postgresPool: pool } : {}), onLockout: async (email, lockout) => void (await recordSignInLockout(prisma, email, lockout)) });
  throttles.push(throttle);
  return throttle;
}

afterAll(async () => {
  await Promise.all(throttles.map((t) => t.idle()));
  await Promise.all(pools.map((p) => p.end()));
});

/** Serves a fetch Request with next-auth's public handler (its pages-API form: no Next.js request scope needed in a test). */
const nextAuth: FetchHandler = async (request) => {
  const url = new URL(request.url);
  const cookies = Object.fromEntries((request.headers.get("cookie") ?? "").split(/;\s*/).filter(Boolean).map((c) => [c.slice(0, c.indexOf("=")), decodeURIComponent(c.slice(c.indexOf("=") + 1))]));
  const req = {
    method: request.method,
    headers: Object.fromEntries(request.headers),
    cookies,
    body: request.method === "POST" ? Object.fromEntries(new URLSearchParams(await request.text())) : undefined,
    query: { ...Object.fromEntries(url.searchParams), nextauth: url.pathname.replace(/^\/api\/auth\//, "").split("/") },
  };
  let status = 200;
  const headers = new Headers();
  let body: string | undefined;
  const res = {
    status: (s: number) => ((status = s), res),
    setHeader: (name: string, value: string | string[]) => {
      headers.delete(name);
      for (const v of [value].flat()) headers.append(name, v);
      return res;
    },
    getHeader: (name: string) => (name.toLowerCase() === "set-cookie" ? headers.getSetCookie() : (headers.get(name) ?? undefined)),
    json: (value: unknown) => ((body = JSON.stringify(value)), headers.set("content-type", "application/json"), res),
    send: (value: unknown) => ((body = typeof value === "string" ? value : JSON.stringify(value)), res),
    end: () => res,
  };
  await (NextAuth as unknown as (req: unknown, res: unknown, options: typeof authOptions) => Promise<void>)(req, res, authOptions);
  return new Response(body ?? null, { status, headers });
};

let csrf: { token: string; cookie: string } | undefined;
async function csrfToken(): Promise<{ token: string; cookie: string }> {
  if (csrf) return csrf;
  const response = await nextAuth(new Request("http://localhost:3000/api/auth/csrf"));
  const cookie = response.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
  csrf = { token: ((await response.json()) as { csrfToken: string }).csrfToken, cookie };
  return csrf;
}

/** What a sign-in answered: the status, Retry-After, the error code the client's signIn() would report, the body. */
interface Answer {
  status: number;
  retryAfter: string | null;
  signInError: string | null;
  body: { url: string; error?: { code: string; message: string } };
  /** The proof of a good sign-in the answer set, as a Cookie header value; null: none. */
  deviceCookie: string | null;
}

/**
 * Signs in the way next-auth's client does (a form post with json=true), from `ip`, through `throttle`;
 * `deviceCookie` is the proof an earlier answer set. The request also carries a forged X-Forwarded-For
 * and Host, which must change nothing.
 */
async function signIn(throttle: SignInThrottle, email: string, password: string, ip: string, deviceCookie: string | null = null, limiter = throttle): Promise<Answer> {
  const { token, cookie } = await csrfToken();
  const form = new URLSearchParams({ email, password, csrfToken: token, callbackUrl: "http://127.0.0.1:3000/", json: "true", redirect: "false" });
  const request = new Request("http://localhost:3000/api/auth/callback/credentials", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: [cookie, deviceCookie].filter(Boolean).join("; "), "x-forwarded-for": `198.51.100.${(ipCounter % 250) + 1}`, "x-forwarded-proto": "https", host: "evil.example" },
    body: form.toString(),
  });
  const response = await throttleCredentialsSignIn(request, nextAuth, limiter, { clientOf: () => ip });
  const body = (await response.json()) as Answer["body"];
  const device = response.headers.getSetCookie().find((c) => c.startsWith(`${SIGN_IN_DEVICE_COOKIE}=`));
  return { status: response.status, retryAfter: response.headers.get("retry-after"), signInError: new URL(body.url).searchParams.get("error"), body, deviceCookie: device ? (device.split(";")[0] ?? null) : null };
}

let n = 0;
async function person(): Promise<{ id: string; email: string }> {
  const user = await createUser(await getPrisma(), { email: `throttle-${++n}-${Date.now()}@example.com`, name: "T", role: "reviewer", password: PASSWORD, by: { type: "system", id: "test" } });
  return { id: user.id, email: user.email };
}
let ipCounter = 0;
const newIp = () => `203.0.113.${++ipCounter}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let throttle: SignInThrottle;
beforeAll(async () => {
  throttle = await newThrottle();
});

describe("password sign-in throttling", () => {
  it("after 3 wrong passwords from one address even the right one from there is 429 with Retry-After, on NEXTAUTH_URL's origin; the owner on another address signs in; the lockout is audited", async () => {
    const user = await person();
    const attacker = newIp();
    let answered = 0;
    let refused: Answer | undefined;
    for (let i = 0; i < 50 && !refused; i++) {
      const answer = await signIn(throttle, i % 2 ? user.email.toUpperCase() : user.email, `wrong-${i}`, attacker);
      if (answer.status === 429) refused = answer;
      else {
        expect(answer).toMatchObject({ status: 401, signInError: "CredentialsSignin" });
        answered++;
      }
    }
    expect(answered).toBe(3);
    // The right password from the guessing address is refused too while the block lasts ...
    const blocked = await signIn(throttle, user.email, PASSWORD, attacker);
    expect(blocked).toMatchObject({ status: 429, retryAfter: "1", signInError: "RateLimited:1" });
    expect(blocked.body.error).toMatchObject({ code: "RATE_LIMITED", message: expect.stringMatching(/^Too many attempts; try again in 1 minute\./) });
    // ... on NEXTAUTH_URL's origin, whatever Host and X-Forwarded-Proto the request carried.
    expect(new URL(blocked.body.url).origin).toBe("http://127.0.0.1:3000");
    expect(refused?.retryAfter).toBe("1");
    // The owner, on another address, is not locked out by a stranger's guesses.
    const owner = newIp();
    const startedAt = Date.now();
    const back = await signIn(throttle, user.email, PASSWORD, owner);
    const backInMs = Date.now() - startedAt;
    expect(back).toMatchObject({ status: 200, signInError: null });
    expect(back.deviceCookie).toMatch(new RegExp(`^${SIGN_IN_DEVICE_COOKIE}=`));

    await throttle.idle();
    const prisma = await getPrisma();
    const events = await prisma.auditEvent.findMany({ where: { scope: `user:${user.id}`, type: SIGN_IN_THROTTLED_EVENT } });
    expect(events.map((e) => ({ actor: e.actor, data: e.data }))).toEqual([{ actor: "system:sign-in", data: { failures: 3, windowSeconds: 60, blockSeconds: 1, lockout: 1 } }]);
    expect(JSON.stringify(events[0]?.data)).not.toContain("@");
    console.log(`[sign-in-throttle] store=${postgres ? "postgresql" : "memory"} attempts answered before 429: ${answered} of 50; Retry-After: ${blocked.retryAfter} s; the owner on another address signed in in ${backInMs} ms`);
  });

  it("each further lockout of one address blocks it longer, up to the maximum; a success starts over", async () => {
    const user = await person();
    const ip = newIp();
    // Not to reach the per-address limit (8 here) before the pair's third lockout.
    const roomy = await newThrottle({ clientFailures: 100 });
    const lockOut = async () => {
      for (let i = 0; i < 3; i++) expect((await signIn(throttle, user.email, "wrong", ip, null, roomy)).status).toBe(401);
      return signIn(throttle, user.email, "wrong", ip, null, roomy);
    };
    expect((await lockOut()).retryAfter).toBe("1");
    await sleep(1_100);
    expect((await lockOut()).retryAfter).toBe("2");
    await sleep(2_100);
    expect((await lockOut()).retryAfter).toBe("2"); // maxBlockSeconds
    await sleep(2_100);
    expect((await signIn(throttle, user.email, PASSWORD, ip, null, roomy)).status).toBe(200);
    expect((await lockOut()).retryAfter).toBe("1");
  });

  it("an unknown email is throttled with the same answer, and nothing is audited", async () => {
    const prisma = await getPrisma();
    await Promise.all(throttles.map((t) => t.idle())); // earlier tests' lockouts are recorded by now
    const before = await prisma.auditEvent.count({ where: { type: SIGN_IN_THROTTLED_EVENT } });
    const ip = newIp();
    const email = `nobody-${Date.now()}@example.com`;
    for (let i = 0; i < 3; i++) expect(await signIn(throttle, email, "guess", ip)).toMatchObject({ status: 401, signInError: "CredentialsSignin" });
    const refused = await signIn(throttle, email, "guess", ip);
    expect(refused).toMatchObject({ status: 429, retryAfter: "1", signInError: "RateLimited:1" });
    expect(Object.keys(refused.body).sort()).toEqual(["error", "url"]);
    await throttle.idle();
    expect(await prisma.auditEvent.count({ where: { type: SIGN_IN_THROTTLED_EVENT } })).toBe(before);
  });

  it("a stranger hammering one account does not block another account, nor the stranger's address", async () => {
    const [victim, other] = [await person(), await person()];
    const stranger = newIp();
    const answers = [];
    for (let i = 0; i < 10; i++) answers.push((await signIn(throttle, victim.email, `guess-${i}`, stranger)).status);
    expect(answers).toEqual([401, 401, 401, 429, 429, 429, 429, 429, 429, 429]);
    // Refused attempts checked no password, so they do not count against the address either.
    expect(await signIn(throttle, other.email, PASSWORD, stranger)).toMatchObject({ status: 200, signInError: null });
    expect(await signIn(throttle, other.email, PASSWORD, newIp())).toMatchObject({ status: 200, signInError: null });
  });

  it("parallel guesses get only the allowed number of answers", async () => {
    const user = await person();
    const ip = newIp();
    const statuses = await Promise.all(Array.from({ length: 20 }, (_, i) => signIn(throttle, user.email, `parallel-${i}`, ip).then((a) => a.status)));
    expect(statuses.filter((s) => s === 401)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(17);
  });

  it("one address gets 8 wrong passwords across accounts, then 429 even with a right one; other addresses and successes are unaffected", async () => {
    const busy = newIp();
    // Successes give their point back: an office behind one address signs in all day.
    const regular = await person();
    for (let i = 0; i < 10; i++) expect((await signIn(throttle, regular.email, PASSWORD, busy)).status).toBe(200);
    for (let i = 0; i < 8; i++) {
      const target = await person();
      expect(await signIn(throttle, target.email, "wrong", busy)).toMatchObject({ status: 401, signInError: "CredentialsSignin" });
    }
    const refused = await signIn(throttle, regular.email, PASSWORD, busy);
    expect(refused.status).toBe(429);
    expect(Number(refused.retryAfter)).toBeGreaterThan(50); // the 60 s window's rest
    expect(await signIn(throttle, regular.email, PASSWORD, newIp())).toMatchObject({ status: 200, signInError: null });
  });

  it.skipIf(!postgres)("on PostgreSQL two app instances share the counts", async () => {
    const [a, b] = [throttle, await newThrottle()];
    const user = await person();
    const ip = newIp();
    expect((await signIn(a, user.email, "wrong-1", ip)).status).toBe(401);
    expect((await signIn(b, user.email, "wrong-2", ip)).status).toBe(401);
    expect((await signIn(a, user.email, "wrong-3", ip)).status).toBe(401);
    // Instance b never saw the third failure, nor the lockout a made: it refuses from the shared table.
    expect(await signIn(b, user.email, PASSWORD, ip)).toMatchObject({ status: 429, retryAfter: "1" });
    await a.idle();
    const events = await (await getPrisma()).auditEvent.count({ where: { scope: `user:${user.id}`, type: SIGN_IN_THROTTLED_EVENT } });
    expect(events).toBe(1);
  });
});

describe("the client address", () => {
  it("is the socket's peer; X-Forwarded-For counts only as far as trusted proxies wrote it", () => {
    const none = parseTrustedProxies(undefined);
    const proxies = parseTrustedProxies("10.0.0.0/8, 2001:db8::1");
    expect(clientAddress({ socketAddress: "203.0.113.9", forwardedFor: "198.51.100.7", trustedProxies: none })).toBe("203.0.113.9");
    expect(clientAddress({ socketAddress: "::ffff:127.0.0.1", forwardedFor: null, trustedProxies: none })).toBe("127.0.0.1");
    expect(clientAddress({ socketAddress: "10.0.0.5", forwardedFor: "1.2.3.4, 198.51.100.7", trustedProxies: proxies })).toBe("198.51.100.7");
    expect(clientAddress({ socketAddress: "2001:db8::1", forwardedFor: "1.2.3.4, 10.1.1.1", trustedProxies: proxies })).toBe("1.2.3.4");
    expect(clientAddress({ socketAddress: "10.0.0.5", forwardedFor: "garbage", trustedProxies: proxies })).toBe("10.0.0.5");
    expect(clientAddress({ socketAddress: null, forwardedFor: "198.51.100.7", trustedProxies: proxies })).toBe("unknown");
    expect(() => parseTrustedProxies("10.0.0.0/8, proxy.internal")).toThrow(/"proxy.internal" is not an IP address/);
  });

  it("over real HTTP: a client's own X-Forwarded-For and a forged stamp are ignored; the socket's peer counts", async () => {
    await installPeerStamp();
    const seen: string[] = [];
    const server = http.createServer((req, res) => {
      const headers = new Headers(Object.entries(req.headers).flatMap(([k, v]) => (typeof v === "string" ? [[k, v] as [string, string]] : [])));
      seen.push(signInClientAddress(new Request("http://127.0.0.1/api/auth/callback/credentials", { headers })));
      res.end("ok");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const port = (server.address() as { port: number }).port;
      await fetch(`http://127.0.0.1:${port}/`, { headers: { "x-forwarded-for": "198.51.100.7", [PEER_HEADER]: "forged 198.51.100.8" } });
      await fetch(`http://127.0.0.1:${port}/`);
    } finally {
      server.close();
    }
    expect(seen).toEqual(["127.0.0.1", "127.0.0.1"]);
    // Without a genuine stamp nothing the client wrote is believed.
    expect(signInClientAddress(new Request("http://x/", { headers: { "x-forwarded-for": "198.51.100.7", [PEER_HEADER]: "forged 198.51.100.8" } }))).toBe("unknown");
  });
});

describe("the lockout figure", () => {
  const attackSeconds = Number(process.env.SAGABOARD_LOCKOUT_ATTACK_SECONDS ?? 10);

  it(`while 20 addresses fail the owner's password continuously (${attackSeconds} s), the owner signs in within seconds`, { timeout: (attackSeconds + 60) * 1000 }, async () => {
    // The default limits, but for the window's length.
    const defaults = ZSignInLimits.parse({});
    const pool = postgres ? openPostgresPool(process.env.DATABASE_URL!, { max: 4 }) : undefined;
    if (pool) pools.push(pool);
    const real = new SignInThrottle({ limits: defaults, ...(pool ? { postgresPool: pool } : {}) });
    throttles.push(real);
    const user = await person();
    // The owner signed in from this browser last week: it holds the proof.
    const earlier = await signIn(real, user.email, PASSWORD, "192.0.2.200");
    expect(earlier.deviceCookie).not.toBeNull();

    const attackers = Array.from({ length: 20 }, (_, i) => `198.18.0.${i + 1}`);
    let stop = false;
    let guesses = 0;
    let refusals = 0;
    const attack = attackers.map(async (ip, i) => {
      for (let k = 0; !stop; k++) {
        const answer = await signIn(real, user.email, `guess-${i}-${k}`, ip);
        if (answer.status === 200) throw new Error("an attacker's guess signed in");
        if (answer.status === 429) refusals++;
        else guesses++;
        await sleep(100);
      }
    });
    /** Signs in as a person would: on a 429, wait what Retry-After says and try again; gives up after 10 s (Infinity). */
    const ownerSignsIn = async (ip: string, cookie: string | null): Promise<number> => {
      const startedAt = Date.now();
      while (Date.now() - startedAt < 10_000) {
        const answer = await signIn(real, user.email, PASSWORD, ip, cookie);
        if (answer.status === 200) return Date.now() - startedAt;
        expect(answer.status).toBe(429);
        await sleep(Number(answer.retryAfter) * 1000);
      }
      return Infinity;
    };
    const withProof: number[] = [];
    const freshBrowser: number[] = [];
    const endsAt = Date.now() + attackSeconds * 1000;
    await sleep(1_000); // the attack is under way
    await Promise.all([
      (async () => {
        while (Date.now() < endsAt) {
          withProof.push(await ownerSignsIn("192.0.2.200", earlier.deviceCookie));
          await sleep(1_000);
        }
      })(),
      (async () => {
        for (let i = 0; Date.now() < endsAt; i++) freshBrowser.push(await ownerSignsIn(`192.0.2.${i + 1}`, null));
      })(),
    ]);
    stop = true;
    await Promise.all(attack);
    await real.idle();
    const summary = (ms: number[]) => {
      const sorted = [...ms].sort((a, b) => a - b);
      return { n: sorted.length, within10s: sorted.filter((ms) => Number.isFinite(ms)).length, median: sorted[Math.floor(sorted.length / 2)] ?? 0, max: sorted[sorted.length - 1] ?? 0 };
    };
    const [a, b] = [summary(withProof), summary(freshBrowser)];
    console.log(
      `[lockout figure] store=${postgres ? "postgresql" : "memory"}, 20 addresses failing the password for ${attackSeconds} s (${guesses} wrong passwords checked, ${refusals} refused): ` +
        `the owner signed in ${a.n} times from a browser that signed in before: median ${a.median} ms, max ${a.max} ms; ` +
        `from a new browser on a new address (the account slowed; first attempts take turns apart from the attack): in within 10 s ${b.within10s} of ${b.n} tries (${freshBrowser.map((ms) => (Number.isFinite(ms) ? `${ms} ms` : "not within 10 s")).join(", ")})`,
    );
    // The way in a stranger cannot take away: the browser that signed in before; and a new browser within a few seconds.
    expect(a.max).toBeLessThan(3_000);
    expect(b.within10s).toBe(b.n);
    expect(b.max).toBeLessThan(8_000);
    expect(guesses).toBeGreaterThan(0);
  });
});
