/**
 * The simulated world hosted by the Next.js server process. Agents and workers run as separate OS
 * processes (and are SIGKILLed in tests), so the world and its ledger (the test oracle) must outlive
 * them: they live here and are reached over `/api/sim/*` (see `lib/demo/sim/remote.ts`).
 *
 * Server-side only. Also holds the small helpers the `/api/sim/*` route handlers share.
 */
import { timingSafeEqual } from "node:crypto";
import type { z } from "zod";
import { World } from "./world";

/** Search lag of a hosted world when `SAGABOARD_SIM_SEARCH_LAG_MS` is unset or invalid. */
export const DEFAULT_HOSTED_SEARCH_LAG_MS = 300;

/** CRM records every hosted world starts with (as `lib/demo/seed/scenarios.ts` seeds them). */
export const HOSTED_CRM_SEED: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {
  crm_ada: { tier: "gold" },
  crm_bo: { tier: "silver" },
};

/** Search lag from `SAGABOARD_SIM_SEARCH_LAG_MS` (a non-negative integer), else the default. */
export function hostedSearchLagMs(env: Readonly<Record<string, string | undefined>> = process.env): number {
  const raw = env["SAGABOARD_SIM_SEARCH_LAG_MS"]?.trim();
  if (!raw || !/^\d+$/.test(raw)) return DEFAULT_HOSTED_SEARCH_LAG_MS;
  return Number(raw);
}

/**
 * Whether the `/api/sim/*` routes answer: only when turned on (`SAGABOARD_SIM=1`). They are the demo's
 * and the tests' simulated world (fault injection, ledger reset, customer emails in the ledger), so a
 * production build never serves them unless someone asks for them.
 */
export function simEnabled(env: Readonly<Record<string, string | undefined>> = process.env): boolean {
  const value = env["SAGABOARD_SIM"]?.trim().toLowerCase();
  return value === "1" || value === "true" || value === "on";
}

/** The header that carries the demo's secret (SAGABOARD_SIM_SECRET) to the simulated systems. */
export const SIM_SECRET_HEADER = "x-sagaboard-sim-secret";

/** The largest body a simulated system takes (its requests are small RPCs). */
export const SIM_BODY_LIMIT_BYTES = 64 * 1024;

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Why a request to the simulated systems is refused, or null to go ahead: off (404, as if absent),
 * a wrong or missing demo secret when SAGABOARD_SIM_SECRET is set (403), or a browser request from
 * another site (403: a page elsewhere must not drive the demo's world).
 */
export function simRefusal(request: Request, env: Readonly<Record<string, string | undefined>> = process.env): Response | null {
  if (!simEnabled(env)) return simDisabled();
  const secret = env["SAGABOARD_SIM_SECRET"];
  if (secret && !sameSecret(request.headers.get(SIM_SECRET_HEADER) ?? "", secret)) {
    return simError(403, "forbidden", `The simulated systems take requests only with the demo's secret (SAGABOARD_SIM_SECRET) in the ${SIM_SECRET_HEADER} header.`);
  }
  const origin = request.headers.get("origin");
  if (origin !== null) {
    let host: string | null = null;
    try {
      host = new URL(origin).host;
    } catch {
      host = null;
    }
    if (host !== new URL(request.url).host && host !== request.headers.get("host")) {
      return simError(403, "forbidden", "The simulated systems refuse requests from other sites.");
    }
  }
  return null;
}

/** A new world as the server hosts it: wall clock, seeded CRM records. */
export function createHostedWorld(opts: { searchLagMs?: number } = {}): World {
  const world = new World({ searchLagMs: opts.searchLagMs ?? hostedSearchLagMs() });
  for (const [id, fields] of Object.entries(HOSTED_CRM_SEED)) world.crm.seed(id, { ...fields });
  return world;
}

/**
 * Kept on globalThis, under a registered symbol: Next's dev server re-evaluates modules on reload,
 * and route handlers may be bundled separately, but they must all see the one world.
 */
const HOST_KEY = Symbol.for("sagaboard.sim.hostedWorld");
type HostGlobal = typeof globalThis & { [HOST_KEY]?: World };

/** The process-wide hosted world, created on first use. */
export function getHostedWorld(): World {
  const g = globalThis as HostGlobal;
  return (g[HOST_KEY] ??= createHostedWorld());
}

/** Replaces the hosted world with a fresh one (empty ledger, no faults, seeded CRM) and returns it. */
export function resetHostedWorld(opts: { searchLagMs?: number } = {}): World {
  const world = createHostedWorld(opts);
  (globalThis as HostGlobal)[HOST_KEY] = world;
  return world;
}

// ---------------------------------------------------------------------------------------------------
// Route helpers

/** `{ error: { code, message, details } }` with `status`: the API's one error shape, `details` naming each bad field. */
export function simError(status: number, code: string, message: string, details: { path: string; message: string }[] = []): Response {
  return Response.json({ error: { code, message, details } }, { status });
}

/** What every `/api/sim/*` route answers while the simulated world is disabled. */
export function simDisabled(): Response {
  return simError(404, "not_found", "Not found.");
}

const BODY_TOO_LARGE = [{ path: "body", message: `larger than ${SIM_BODY_LIMIT_BYTES} bytes` }];

/** Parses the request's JSON body with `schema`; a Response (400) when it is not JSON or does not fit. */
export async function readSimBody<S extends z.ZodType>(
  request: Request,
  schema: S,
  opts: { optional?: boolean } = {},
): Promise<{ ok: true; data: z.output<S> } | { ok: false; response: Response }> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > SIM_BODY_LIMIT_BYTES) return { ok: false, response: simError(413, "payload_too_large", `The body is larger than the simulated systems take (${SIM_BODY_LIMIT_BYTES} bytes).`, BODY_TOO_LARGE) };
  const text = await request.text();
  if (Buffer.byteLength(text) > SIM_BODY_LIMIT_BYTES) return { ok: false, response: simError(413, "payload_too_large", `The body is larger than the simulated systems take (${SIM_BODY_LIMIT_BYTES} bytes).`, BODY_TOO_LARGE) };
  let raw: unknown = {};
  if (text.trim() !== "" || !opts.optional) {
    try {
      raw = JSON.parse(text);
    } catch {
      return { ok: false, response: simError(400, "invalid_json", "The request body must be JSON.", [{ path: "body", message: "is not valid JSON" }]) };
    }
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    // A strict object's unknown keys are one issue at the object: name each key instead.
    const issues = parsed.error.issues.flatMap((i) =>
      i.code === "unrecognized_keys"
        ? i.keys.map((key) => ({ path: ["body", ...i.path.map(String), key].join("."), message: "unknown field" }))
        : [{ path: ["body", ...i.path.map(String)].join("."), message: i.message }],
    );
    const detail = issues.map((i) => `${i.path}: ${i.message}`).join("; ");
    return { ok: false, response: simError(400, "invalid_request", `The request body is invalid: ${detail}.`, issues) };
  }
  return { ok: true, data: parsed.data };
}
