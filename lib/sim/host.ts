/**
 * The simulated world hosted by the Next.js server process. Agents and workers run as separate OS
 * processes (and are SIGKILLed in tests), so the world and its ledger (the test oracle) must outlive
 * them: they live here and are reached over `/api/sim/*` (see `lib/sim/remote.ts`).
 *
 * Server-side only. Also holds the small helpers the `/api/sim/*` route handlers share.
 */
import type { z } from "zod";
import { World } from "./world";

/** Search lag of a hosted world when `SAGABOARD_SIM_SEARCH_LAG_MS` is unset or invalid. */
export const DEFAULT_HOSTED_SEARCH_LAG_MS = 300;

/** CRM records every hosted world starts with (as `lib/demo/scenarios.ts` seeds them). */
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

/** Whether the `/api/sim/*` routes answer (anything but `SAGABOARD_SIM=0` enables them). */
export function simEnabled(env: Readonly<Record<string, string | undefined>> = process.env): boolean {
  return env["SAGABOARD_SIM"] !== "0";
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

/** `{ error: { code, message, issues? } }` with `status`. */
export function simError(status: number, code: string, message: string, issues?: { path: string; message: string }[]): Response {
  return Response.json({ error: { code, message, ...(issues ? { issues } : {}) } }, { status });
}

/** What every `/api/sim/*` route answers while the simulated world is disabled. */
export function simDisabled(): Response {
  return simError(404, "not_found", "Not found.");
}

/** Parses the request's JSON body with `schema`; a Response (400) when it is not JSON or does not fit. */
export async function readSimBody<S extends z.ZodType>(
  request: Request,
  schema: S,
  opts: { optional?: boolean } = {},
): Promise<{ ok: true; data: z.output<S> } | { ok: false; response: Response }> {
  const text = await request.text();
  let raw: unknown = {};
  if (text.trim() !== "" || !opts.optional) {
    try {
      raw = JSON.parse(text);
    } catch {
      return { ok: false, response: simError(400, "invalid_json", "The request body must be JSON.") };
    }
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({ path: i.path.map(String).join("."), message: i.message }));
    const detail = issues.map((i) => `${i.path || "(body)"}: ${i.message}`).join("; ");
    return { ok: false, response: simError(400, "invalid_request", `The request body is invalid: ${detail}.`, issues) };
  }
  return { ok: true, data: parsed.data };
}
