/**
 * The authorization grid: every route file under app/api (found as Next finds them; a new route
 * without an entry here fails) x every principal, each called with a minimal valid-looking request
 * naming real rows. Who may get a 2xx is the entry's word; anything else is a finding: an unexpected
 * 2xx (a leak or a write someone may not make), a 5xx, or a refused write that changed a row.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { Role } from "@/lib/server/auth/roles";
import { routeTable } from "../support/api-router";
import { useTestDatabase } from "./api-test-kit";
import { changedTables, PRINCIPALS, seedRouteWorld, send, snapshotTables, type Principal, type RouteWorld } from "./route-world";

const getPrisma = useTestDatabase("authorization-grid");

/** Who may get a 2xx: anyone, or agent tokens (their own rows, or any token), the worker token, and roles. */
type Access = "public" | { agent?: "own" | "any"; worker?: boolean; roles?: readonly Role[] };

const READ: readonly Role[] = ["viewer", "support", "reviewer", "admin"];
const DECIDE: readonly Role[] = ["reviewer", "admin"];
const CORRECT: readonly Role[] = ["support", "admin"];
const ADMIN: readonly Role[] = ["admin"];
const OWN = { agent: "own" } as const;

/** What a minimal valid-looking request of a route carries (params come from the world's rows). */
interface Cell {
  access: Access;
  query?: (w: RouteWorld) => string;
  body?: (w: RouteWorld, n: number) => unknown;
}

const event = { type: "grid.check" };
const GRID: Record<string, Cell> = {
  "GET /api/health": { access: "public" },
  // Only the scrape token (SAGABOARD_METRICS_TOKEN) is answered; no principal here holds it, and agents' and people's credentials are not it.
  "GET /api/metrics": { access: { roles: [] } },
  "GET /api/v1/openapi.json": { access: "public" },
  "GET /api/sim/faults": { access: "public" },
  "POST /api/sim/faults": { access: "public", body: () => ({ op: "payments.charge", fault: { kind: "timeout" }, times: 1 }) },
  "DELETE /api/sim/faults": { access: "public" },
  "GET /api/sim/ledger": { access: "public" },
  "POST /api/sim/reset": { access: "public", body: () => ({ searchLagMs: 0 }) },
  "POST /api/sim/rpc": { access: "public", body: () => ({ system: "crm", method: "get", args: ["crm_ada"] }) },
  "POST /api/sim/search-lag": { access: "public", body: () => ({ ms: 0 }) },

  // A worker lists the runs started under its own name: none.
  "GET /api/v1/runs": { access: { agent: "any", worker: true } },
  "POST /api/v1/runs": { access: { agent: "any" }, body: () => ({ title: "grid run" }) },
  "GET /api/v1/runs/:runId": { access: OWN },
  "GET /api/v1/runs/:runId/audit": { access: OWN },
  "POST /api/v1/runs/:runId/status": { access: OWN, body: () => ({ from: ["UNWOUND"], to: "COMPLETED", event }) },
  "GET /api/v1/runs/:runId/steps": { access: OWN },
  "POST /api/v1/runs/:runId/calls": { access: OWN, body: () => ({ tool: "search_orders", args: { orderId: "A-1" }, cursor: 0 }) },
  "POST /api/v1/runs/:runId/complete": { access: OWN },
  "POST /api/v1/steps/:stepId/outcome": { access: OWN, body: () => ({ outcome: "unknown", message: "grid", attempts: 1 }) },
  "POST /api/v1/steps/:stepId/reconcile": { access: OWN, body: () => ({ found: false, lookups: 2 }) },
  "POST /api/v1/steps/:stepId/compensation": { access: OWN, body: () => ({ done: false, reason: "grid", message: "grid" }) },
  "POST /api/v1/runs/:runId/unwind/next": { access: OWN, body: () => ({ reason: "grid" }) },
  "POST /api/v1/steps/:stepId/compensate/next": { access: OWN, body: () => ({ draftedBy: "grid" }) },
  "GET /api/v1/steps/:stepId": { access: OWN },
  "GET /api/v1/runs/:runId/pivots": { access: OWN },
  "POST /api/v1/runs/:runId/pivots": { access: OWN, body: () => ({ summary: "grid pivot", plan: [{ tool: "send_email", args: { to: "x@example.com", subject: "s", body: "b" } }] }) },
  "GET /api/v1/pivots/:pivotId": { access: OWN, query: () => "?waitMs=0" },
  "GET /api/v1/runs/:runId/escalations": { access: OWN },
  "POST /api/v1/runs/:runId/escalations": {
    access: OWN,
    body: (w, n) => ({ escalation: { stepId: null, kind: "STUCK_AFTER_PIVOT", title: "grid", detail: {}, owner: null, dedupeKey: `run:${w.ids.runId}:grid-${n}` }, event }),
  },
  // Any token may look a key up; one that is not its own is answered "none" (null), as if absent.
  "GET /api/v1/escalations": { access: { agent: "any", worker: true }, query: (w) => `?dedupeKey=${encodeURIComponent(`step:${w.ids.stepId}:grid:${w.ids.runId}`)}` },
  "GET /api/v1/escalations/:escalationId": { access: OWN },
  "GET /api/v1/runs/:runId/corrections": { access: OWN },
  "POST /api/v1/runs/:runId/corrections": {
    access: OWN,
    body: (w) => ({ correction: { stepId: w.ids.stepId, audience: ["customer"], rank: 0, subject: "s", body: "b" }, event }),
  },
  "POST /api/v1/runs/:runId/unwind": { access: OWN, body: () => ({ reason: "grid" }) },
  "GET /api/v1/tools": { access: { agent: "any", worker: true } },
  "POST /api/v1/tools/declarations": { access: { agent: "any", worker: true }, body: () => ({ tools: [] }) },
  "POST /api/v1/worker/claim": { access: { worker: true }, body: () => ({ workerId: "grid", tools: ["send_email"], max: 1 }) },
  "POST /api/v1/worker/tasks/:taskId/complete": { access: { worker: true }, body: () => ({ attempt: 99, workerId: "grid", result: {} }) },
  "POST /api/v1/worker/tasks/:taskId/fail": { access: { worker: true }, body: () => ({ attempt: 99, workerId: "grid", error: {}, retry: false }) },
  "POST /api/v1/worker/tasks/:taskId/heartbeat": { access: { worker: true }, body: () => ({ attempt: 99, workerId: "grid", leaseMs: 1000 }) },

  "GET /api/dashboard/runs": { access: { roles: READ } },
  "GET /api/dashboard/runs/:runId": { access: { roles: READ } },
  "GET /api/dashboard/runs/:runId/revokes": { access: { roles: READ } },
  "POST /api/dashboard/runs/:runId/revoke": { access: { roles: DECIDE }, body: () => ({ reason: "grid" }) },
  "POST /api/dashboard/steps/:stepId/revoke": { access: { roles: DECIDE }, body: () => ({ reason: "grid" }) },
  "GET /api/dashboard/revokes": { access: { roles: READ } },
  "GET /api/dashboard/pivots/:pivotId": { access: { roles: READ } },
  "POST /api/dashboard/pivots/:pivotId/approve": { access: { roles: DECIDE }, body: () => ({ planHash: "0".repeat(64) }) },
  "POST /api/dashboard/pivots/:pivotId/reject": { access: { roles: DECIDE }, body: () => ({ planHash: "0".repeat(64), reason: "grid" }) },
  "POST /api/dashboard/pivots/:pivotId/edit": { access: { roles: DECIDE }, body: () => ({ planHash: "0".repeat(64), itemIdx: 0, args: { to: "x@example.com", subject: "s", body: "b" } }) },
  "GET /api/dashboard/escalations": { access: { roles: READ } },
  "GET /api/dashboard/escalations/:escalationId": { access: { roles: READ } },
  "POST /api/dashboard/escalations/:escalationId/claim": { access: { roles: DECIDE } },
  "POST /api/dashboard/escalations/:escalationId/release": { access: { roles: DECIDE } },
  "POST /api/dashboard/escalations/:escalationId/check": { access: { roles: DECIDE } },
  "GET /api/dashboard/escalations/:escalationId/check": { access: { roles: DECIDE } },
  "POST /api/dashboard/escalations/:escalationId/resolve": { access: { roles: DECIDE }, body: () => ({ kind: "OUTCOME_UNKNOWN", outcome: "NOT_EXECUTED", evidence: "grid" }) },
  "POST /api/dashboard/escalations/decide": { access: { roles: DECIDE }, body: (w) => ({ escalationIds: [w.ids.escalationId], approve: false, note: "grid" }) },
  "GET /api/dashboard/corrections": { access: { roles: READ } },
  "GET /api/dashboard/corrections/:correctionId": { access: { roles: READ } },
  "POST /api/dashboard/corrections/:correctionId/claim": { access: { roles: CORRECT } },
  "POST /api/dashboard/corrections/:correctionId/release": { access: { roles: CORRECT } },
  "POST /api/dashboard/corrections/:correctionId/edit": { access: { roles: CORRECT }, body: () => ({ expectedVersion: 0, subject: "grid" }) },
  "POST /api/dashboard/corrections/:correctionId/dismiss": { access: { roles: CORRECT }, body: () => ({ reason: "grid" }) },
  "POST /api/dashboard/corrections/:correctionId/send": { access: { roles: CORRECT }, body: () => ({ expectedVersion: 0 }) },
  "GET /api/dashboard/audit": { access: { roles: READ } },
  "GET /api/dashboard/audit/export": { access: { roles: READ }, query: () => "?format=jsonl" },
  "GET /api/dashboard/audit/verify": { access: { roles: READ } },
  "GET /api/dashboard/audit/heads": { access: { roles: READ } },
  "POST /api/dashboard/audit/heads/check": {
    access: { roles: READ },
    body: () => ({ format: "sagaboard.audit-chain-heads/1", exportedAt: new Date().toISOString(), chains: 0, digest: "0".repeat(64), heads: [] }),
  },
  "GET /api/dashboard/admin/tools": { access: { roles: READ } },
  "GET /api/dashboard/admin/tools/:name": { access: { roles: READ } },
  "POST /api/dashboard/admin/tools/:name": { access: { roles: ADMIN }, body: () => ({ expectedVersion: 999, changes: {}, reason: "grid" }) },
  "POST /api/dashboard/admin/tools/:name/proposal": { access: { roles: ADMIN }, body: () => ({ expectedVersion: 999, decision: "refuse", reason: "grid" }) },
  "GET /api/dashboard/admin/tokens": { access: { roles: ADMIN } },
  "POST /api/dashboard/admin/tokens": { access: { roles: ADMIN }, body: (_w, n) => ({ name: `grid-new-${n}`, role: "agent", tools: ["search_orders"] }) },
  "POST /api/dashboard/admin/tokens/revoke": { access: { roles: ADMIN }, body: (w) => ({ name: w.spare.tokenName }) },
  "POST /api/dashboard/admin/tokens/lifetime": { access: { roles: ADMIN }, body: () => ({ defaultLifetimeSec: null }) },
  "GET /api/dashboard/admin/users": { access: { roles: ADMIN } },
  "POST /api/dashboard/admin/users": { access: { roles: ADMIN }, body: (_w, n) => ({ email: `grid-new-${n}@example.com`, name: "new", role: "viewer" }) },
  "POST /api/dashboard/admin/users/role": { access: { roles: ADMIN }, body: (w) => ({ email: w.spare.email, role: "support" }) },
  "POST /api/dashboard/admin/users/disable": { access: { roles: ADMIN }, body: (w) => ({ email: w.spare.email }) },
  "POST /api/dashboard/admin/users/enable": { access: { roles: ADMIN }, body: (w) => ({ email: w.spare.email }) },
  // Slack's interactivity requests: only Slack's signature makes them act (Slack is off here: 404 for all, and nothing written).
  "POST /api/slack/interactivity": { access: { roles: [] }, body: () => ({ payload: "{}" }) },
  // The confirm page's form POST of an approval email: a reviewer's own link only (none here names one, so none decides).
  "POST /api/approvals/:linkId": { access: { roles: DECIDE }, body: () => ({ decision: "approve", planHash: "grid" }) },
  "POST /api/dashboard/admin/users/break-glass": { access: { roles: ADMIN }, body: (w) => ({ email: w.spare.email, breakGlass: false }) },
  "GET /api/dashboard/admin/sso": { access: { roles: ADMIN } },
  "POST /api/dashboard/admin/sso/group-roles": { access: { roles: ADMIN }, body: () => ({ mapping: [{ group: "grid-readers", role: "viewer" }] }) },
  "POST /api/dashboard/admin/sso/scim-tokens": { access: { roles: ADMIN }, body: (_w, n) => ({ name: `grid-scim-${n}` }) },
  "POST /api/dashboard/admin/sso/scim-tokens/revoke": { access: { roles: ADMIN }, body: () => ({ name: "grid-scim-missing" }) },
  "POST /api/dashboard/me/sign-out-everywhere": { access: { roles: READ } },
  "GET /api/dashboard/admin/webhooks": { access: { roles: ADMIN } },
  "GET /api/dashboard/admin/operations": { access: { roles: ADMIN } },
  "POST /api/dashboard/admin/webhooks": { access: { roles: ADMIN }, body: (_w, n) => ({ name: `grid-hook-${n}`, url: "http://127.0.0.1:9/hook", topics: ["pivot_waiting"] }) },
  "POST /api/dashboard/admin/webhooks/replay": { access: { roles: ADMIN }, body: () => ({ deliveryId: "dlv_missing" }) },
  "POST /api/dashboard/admin/webhooks/enabled": { access: { roles: ADMIN }, body: () => ({ webhookId: "whk_missing", enabled: false }) },
  "POST /api/dashboard/admin/webhooks/delete": { access: { roles: ADMIN }, body: () => ({ webhookId: "whk_missing" }) },
  "POST /api/dashboard/admin/webhooks/sla-rules": { access: { roles: ADMIN }, body: () => ({ target: "kind:OUTCOME_UNKNOWN", slaSec: 3600, reminderAt: 0.5, backupTeam: null, expireSec: null }) },
  "POST /api/dashboard/admin/webhooks/teams": { access: { roles: ADMIN }, body: (_w, n) => ({ name: `grid-team-${n}`, emails: ["ops@example.com"] }) },
};

/**
 * Worker-token 2xx answers on agent-only routes still to be closed (worker tokens acting on runs
 * they hold no task of): tolerated, and counted, only while this lists them.
 */
// Reads by escalation id and dedupe key (lib/server/agent-api/get-escalation.ts, find-escalation.ts) still let any worker token
// through: they check mayActOn, not the claimed-task rule the other run and step paths now apply.
// Routes where a worker token was known to get a 2xx it should not (none left: worker reads of escalations now need a claimed task).
const WORKER_GAP_FOR_NOW = new Set<string>();

function mayGet2xx(access: Access, who: Principal): boolean {
  if (access === "public") return true;
  if (who === "agentA") return access.agent !== undefined;
  if (who === "agentB") return access.agent === "any";
  if (who === "worker") return access.worker === true;
  if (who === "anonymous" || who === "revoked") return false;
  return access.roles?.includes(who) ?? false;
}

function fill(pattern: string, w: RouteWorld): string {
  return pattern.replace(/:(\w+)/g, (_m, name: string) => encodeURIComponent((w.ids as Record<string, string>)[name] ?? `missing-${name}`));
}

let world: RouteWorld;
beforeAll(async () => {
  world = await seedRouteWorld(await getPrisma(), "grid");
}, 60_000);

describe("authorization grid", () => {
  it("has an entry for every route file and method, and none for a route that is gone", () => {
    const served = routeTable.flatMap((r) => r.methods.map((m) => `${m} ${r.pattern}`)).sort();
    expect(served.filter((k) => !(k in GRID)), "routes without a grid entry").toEqual([]);
    expect(Object.keys(GRID).filter((k) => !served.includes(k)), "grid entries without a route").toEqual([]);
  });

  it("gives a 2xx only to those the entry names, never a 5xx, and a refused write changes no row", async () => {
    const prisma = await getPrisma();
    const unexpected: string[] = [];
    const serverErrors: string[] = [];
    const changed: string[] = [];
    const workerGap: string[] = [];
    let cells = 0;
    let last: Record<string, string> | undefined;
    let n = 0;
    const routes = [...routeTable].sort((a, b) => a.pattern.localeCompare(b.pattern));
    for (const { pattern, methods } of routes) {
      for (const method of methods) {
        const key = `${method} ${pattern}`;
        const cell = GRID[key];
        if (!cell) continue;
        for (const who of PRINCIPALS) {
          cells++;
          const allowed = mayGet2xx(cell.access, who);
          const writes = method !== "GET";
          // A refused call writes nothing, so the snapshot after one is the snapshot before the next.
          const before = writes && !allowed ? (last ??= await snapshotTables(prisma)) : undefined;
          if (allowed) last = undefined;
          const body = cell.body?.(world, ++n);
          const res = await send(world, who, { method, url: fill(pattern, world) + (cell.query?.(world) ?? ""), body: body === undefined ? undefined : JSON.stringify(body) });
          const line = `${key} as ${who}: ${res.status} ${res.text.slice(0, 200)}`;
          if (res.status >= 500) serverErrors.push(line);
          if (res.status >= 200 && res.status < 300 && !allowed) {
            if (who === "worker" && WORKER_GAP_FOR_NOW.has(key)) workerGap.push(line);
            else unexpected.push(line);
          }
          if (before) {
            last = await snapshotTables(prisma);
            const tables = changedTables(before, last);
            if (tables.length > 0 && !(who === "worker" && WORKER_GAP_FOR_NOW.has(key))) changed.push(`${line} changed ${tables.join(", ")}`);
          }
        }
      }
    }
    const routeCount = new Set(Object.keys(GRID).map((k) => k.split(" ")[1])).size;
    console.log(
      `authorization grid: routes=${routeCount} principals=${PRINCIPALS.length} cells=${cells} unexpected 2xx=${unexpected.length} 5xx=${serverErrors.length} ` +
        `refused writes changed rows=${changed.length}${WORKER_GAP_FOR_NOW.size > 0 ? ` worker 2xx expected-for-now=${workerGap.length}` : ""}`,
    );
    for (const line of [...unexpected, ...serverErrors, ...changed]) console.log(`  finding: ${line}`);
    expect(unexpected, "unexpected 2xx").toEqual([]);
    expect(serverErrors, "5xx").toEqual([]);
    expect(changed, "refused writes that changed rows").toEqual([]);
  }, 240_000);
});
