/**
 * The bad-input corpus: wrong types, unknown fields, oversize and deeply nested bodies, bytes that
 * are not UTF-8 or not JSON, wrong content types, malformed %-escapes, bad query values and a reused
 * Idempotency-Key, against agent, dashboard and simulated-system routes. Every answer must be a 4xx
 * with the one error shape `{ error: { code, message, details } }` naming the field when it is about
 * input, never a 5xx, and no row may change.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { allEndpoints } from "@/lib/delivery/contracts";
import { fillPath } from "@/packages/client/src/protocol/endpoint";
import { MAX_BODY_BYTES, MAX_JSON_DEPTH } from "@/lib/delivery/route";
import { useTestDatabase } from "./api-test-kit";
import { changedTables, seedRouteWorld, send, snapshotTables, type Principal, type RouteRequest, type RouteWorld } from "./route-world";

const getPrisma = useTestDatabase("bad-input-corpus");

/** One bad request and what its answer must name. */
interface Case {
  name: string;
  who: Principal;
  request: (w: RouteWorld) => RouteRequest;
  /** A detail's path must start with this ("body", "query.take", ...). */
  field: string;
  /** Statuses it may answer (default: 400). */
  statuses?: number[];
  /** A call made first whose writes are allowed (the first use of an Idempotency-Key). */
  before?: (w: RouteWorld) => RouteRequest;
}

const nested = (depth: number): unknown => {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
};
const INVALID_UTF8 = new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]); // {"a":"\xff\xfe"}
const json = (v: unknown) => JSON.stringify(v);
const ids = (w: RouteWorld): Record<string, string> => w.ids;
const whoFor = (path: string, auth: string): Principal => (path.startsWith("/api/v1/worker") ? "worker" : auth === "agent" ? "agentA" : "admin");
// Streams its own body (a file), reading the query itself: not a contract-parsed route.
const FILE_ROUTES = new Set(["/api/dashboard/audit/export"]);

const cases: Case[] = [];
for (const e of allEndpoints) {
  if (e.auth === "public") continue;
  const who = whoFor(e.path, e.auth);
  const url = (w: RouteWorld, query = "") => fillPath(e.path, ids(w)) + query;
  const label = `${e.method} ${e.path}`;
  if (e.method !== "GET") {
    const upload = e.path === "/api/dashboard/audit/heads/check";
    cases.push({ name: `${label}: unknown field`, who, field: upload ? "body" : "body.zzTypo", request: (w) => ({ method: e.method, url: url(w), body: json({ zzTypo: 1 }) }) });
    cases.push({ name: `${label}: not JSON`, who, field: "body", request: (w) => ({ method: e.method, url: url(w), body: '{"title": ' }) });
    cases.push({ name: `${label}: invalid UTF-8`, who, field: "body", request: (w) => ({ method: e.method, url: url(w), body: INVALID_UTF8 }) });
    if (e.body) {
      cases.push({ name: `${label}: an array for the object`, who, field: "body", request: (w) => ({ method: e.method, url: url(w), body: json([1, 2]) }) });
      cases.push({ name: `${label}: form-encoded as text/plain`, who, field: "body", request: (w) => ({ method: e.method, url: url(w), body: "a=1&b=2", headers: { "content-type": "text/plain" } }) });
    }
  } else if (!FILE_ROUTES.has(e.path)) {
    cases.push({ name: `${label}: unknown query parameter`, who, field: "query.zzTypo", request: (w) => ({ method: "GET", url: url(w, "?zzTypo=1") }) });
  }
}

const big = "x".repeat(MAX_BODY_BYTES + 1);
const begin = (body: Record<string, unknown>) => json({ tool: "search_orders", args: {}, cursor: 0, ...body });
cases.push(
  { name: "runs: 1 MiB + 1 title", who: "agentA", field: "body", statuses: [413], request: () => ({ method: "POST", url: "/api/v1/runs", body: json({ title: big }) }) },
  { name: "runs: Content-Length over 1 MiB", who: "agentA", field: "body", statuses: [413], request: () => ({ method: "POST", url: "/api/v1/runs", body: json({ title: "t" }), headers: { "content-length": String(MAX_BODY_BYTES + 10) } }) },
  { name: "admin tokens: 1 MiB + 1 body", who: "admin", field: "body", statuses: [413], request: () => ({ method: "POST", url: "/api/dashboard/admin/tokens", body: json({ name: big }) }) },
  { name: "runs: a 201-character title", who: "agentA", field: "body.title", request: () => ({ method: "POST", url: "/api/v1/runs", body: json({ title: "t".repeat(201) }) }) },
  { name: "runs: a number for the title", who: "agentA", field: "body.title", request: () => ({ method: "POST", url: "/api/v1/runs", body: json({ title: 42 }) }) },
  { name: "runs: metadata nested 65 levels", who: "agentA", field: "body", request: () => ({ method: "POST", url: "/api/v1/runs", body: json({ title: "t", metadata: nested(MAX_JSON_DEPTH + 1) }) }) },
  { name: "runs: a body nested 10,000 levels", who: "agentA", field: "body", request: () => ({ method: "POST", url: "/api/v1/runs", body: "[".repeat(10_000) + "]".repeat(10_000) }) },
  { name: "calls: args nested 65 levels", who: "agentA", field: "body", request: (w) => ({ method: "POST", url: `/api/v1/runs/${w.ids.runId}/calls`, body: begin({ args: nested(MAX_JSON_DEPTH) }) }) },
  { name: "calls: a misspelt cursor", who: "agentA", field: "body.cursorr", request: (w) => ({ method: "POST", url: `/api/v1/runs/${w.ids.runId}/calls`, body: begin({ cursorr: 1 }) }) },
  { name: "calls: a negative cursor", who: "agentA", field: "body.cursor", request: (w) => ({ method: "POST", url: `/api/v1/runs/${w.ids.runId}/calls`, body: begin({ cursor: -1 }) }) },
  { name: "calls: a step key the client made up", who: "agentA", field: "body.stepKey", request: (w) => ({ method: "POST", url: `/api/v1/runs/${w.ids.runId}/calls`, body: begin({ stepKey: "0".repeat(32) }) }) },
  { name: "calls: a tool outside the token", who: "agentA", field: "tool", statuses: [403], request: (w) => ({ method: "POST", url: `/api/v1/runs/${w.ids.runId}/calls`, body: begin({ tool: "no_such_tool" }) }) },
  { name: "calls: a pure tool is not logged", who: "agentA", field: "tool", request: (w) => ({ method: "POST", url: `/api/v1/runs/${w.ids.runId}/calls`, body: begin({}) }) },
  { name: "outcome: not an outcome", who: "agentA", field: "body.outcome", request: (w) => ({ method: "POST", url: `/api/v1/steps/${w.ids.stepId}/outcome`, body: json({ outcome: "compensated", attempts: 1 }) }) },
  { name: "outcome: a step not in flight", who: "agentA", field: "outcome", statuses: [409], request: (w) => ({ method: "POST", url: `/api/v1/steps/${w.ids.stepId}/outcome`, body: json({ outcome: "unknown", message: "late", attempts: 1 }) }) },
  { name: "compensation report: not done, without a reason", who: "agentA", field: "body.reason", request: (w) => ({ method: "POST", url: `/api/v1/steps/${w.ids.stepId}/compensation`, body: json({ done: false, message: "refused" }) }) },
  { name: "unwind next: skipStepIds not a list", who: "agentA", field: "body.skipStepIds", request: (w) => ({ method: "POST", url: `/api/v1/runs/${w.ids.runId}/unwind/next`, body: json({ reason: "cancelled", skipStepIds: "all" }) }) },
  { name: "pivots: an unknown plan item field", who: "agentA", field: "body.plan.0.tol", request: (w) => ({ method: "POST", url: `/api/v1/runs/${w.ids.runId}/pivots`, body: json({ summary: "s", plan: [{ tool: "send_email", tol: "x", args: {} }] }) }) },
  { name: "pivots: an empty plan", who: "agentA", field: "body.plan", request: (w) => ({ method: "POST", url: `/api/v1/runs/${w.ids.runId}/pivots`, body: json({ summary: "s", plan: [] }) }) },
  { name: "escalations: an unknown kind", who: "agentA", field: "body.escalation.kind", request: (w) => ({ method: "POST", url: `/api/v1/runs/${w.ids.runId}/escalations`, body: json({ escalation: { stepId: null, kind: "NOPE", title: "t", detail: {}, owner: null, dedupeKey: `run:${w.ids.runId}:c` }, event: { type: "x" } }) }) },
  { name: "list runs: take=abc", who: "agentA", field: "query.take", request: () => ({ method: "GET", url: "/api/v1/runs?take=abc" }) },
  { name: "list runs: take=0", who: "agentA", field: "query.take", request: () => ({ method: "GET", url: "/api/v1/runs?take=0" }) },
  { name: "list runs: take=201", who: "agentA", field: "query.take", request: () => ({ method: "GET", url: "/api/v1/runs?take=201" }) },
  { name: "list runs: status=NOPE", who: "agentA", field: "query.status", request: () => ({ method: "GET", url: "/api/v1/runs?status=NOPE" }) },
  { name: "list runs: take twice", who: "agentA", field: "query.take", request: () => ({ method: "GET", url: "/api/v1/runs?take=1&take=2" }) },
  { name: "pivot: waitMs=-5", who: "agentA", field: "query.waitMs", request: (w) => ({ method: "GET", url: `/api/v1/pivots/${w.ids.pivotId}?waitMs=-5` }) },
  { name: "pivot: waitMs=99999", who: "agentA", field: "query.waitMs", request: (w) => ({ method: "GET", url: `/api/v1/pivots/${w.ids.pivotId}?waitMs=99999` }) },
  { name: "escalations: status=NOPE", who: "agentA", field: "query.status", request: (w) => ({ method: "GET", url: `/api/v1/runs/${w.ids.runId}/escalations?status=NOPE` }) },
  { name: "find escalation: no dedupeKey", who: "agentA", field: "query.dedupeKey", request: () => ({ method: "GET", url: "/api/v1/escalations" }) },
  { name: "dashboard runs: a misspelt filter", who: "viewer", field: "query.statuss", request: () => ({ method: "GET", url: "/api/dashboard/runs?statuss=RUNNING" }) },
  { name: "dashboard tokens: take=-1", who: "admin", field: "query.take", request: () => ({ method: "GET", url: "/api/dashboard/admin/tokens?take=-1" }) },
  { name: "audit export: format=xml", who: "viewer", field: "query.format", request: () => ({ method: "GET", url: "/api/dashboard/audit/export?format=xml" }) },
  { name: "tool edit: an unknown change field", who: "admin", field: "body.changes.zzTypo", request: (w) => ({ method: "POST", url: `/api/dashboard/admin/tools/${w.ids.name}`, body: json({ expectedVersion: 1, changes: { zzTypo: 1 } }) }) },
  { name: "resolve: a field of another kind", who: "reviewer", field: "body.approve", request: (w) => ({ method: "POST", url: `/api/dashboard/escalations/${w.ids.escalationId}/resolve`, body: json({ kind: "OUTCOME_UNKNOWN", outcome: "CONFIRMED", evidence: "seen", approve: true }) }) },
  { name: "resolve: an unknown kind", who: "reviewer", field: "body.kind", request: (w) => ({ method: "POST", url: `/api/dashboard/escalations/${w.ids.escalationId}/resolve`, body: json({ kind: "NOPE" }) }) },
  { name: "create user: not an email", who: "admin", field: "body.email", request: () => ({ method: "POST", url: "/api/dashboard/admin/users", body: json({ email: "nope", name: "n", role: "viewer" }) }) },
  { name: "create user: role=root", who: "admin", field: "body.role", request: () => ({ method: "POST", url: "/api/dashboard/admin/users", body: json({ email: "a@example.com", name: "n", role: "root" }) }) },
  { name: "edit correction: expectedVersion as a string", who: "support", field: "body.expectedVersion", request: (w) => ({ method: "POST", url: `/api/dashboard/corrections/${w.ids.correctionId}/edit`, body: json({ expectedVersion: "1" }) }) },
  { name: "heads check: not a heads file", who: "viewer", field: "body.format", request: () => ({ method: "POST", url: "/api/dashboard/audit/heads/check", body: json({ format: "other" }) }) },
);
for (const [label, path] of [
  ["run", "/api/v1/runs/%E0%A4%A"],
  ["run log", "/api/v1/runs/%/steps"],
  ["step", "/api/v1/steps/%ZZ"],
  ["pivot", "/api/v1/pivots/%"],
  ["escalation", "/api/v1/escalations/%C0"],
  ["dashboard run", "/api/dashboard/runs/%"],
  ["dashboard correction", "/api/dashboard/corrections/%E0%A4%A"],
  ["tool", "/api/dashboard/admin/tools/%"],
] as const) {
  const who: Principal = path.startsWith("/api/v1") ? "agentA" : "admin";
  cases.push({ name: `${label}: a malformed %-escape`, who, field: "params", request: () => ({ method: "GET", url: path }) });
}
// The same Idempotency-Key with another body: refused (422), the first answer stands.
for (const [label, url, first, second] of [
  ["runs", "/api/v1/runs", { title: "first" }, { title: "second" }],
  ["unwind", "/api/v1/runs/:runId/unwind", { reason: "first" }, { reason: "second" }],
  ["escalations", "/api/v1/runs/:runId/escalations", { escalation: { stepId: null, kind: "STUCK_AFTER_PIVOT", title: "first", detail: {}, owner: null, dedupeKey: "idem" }, event: { type: "x" } }, { escalation: { stepId: null, kind: "STUCK_AFTER_PIVOT", title: "second", detail: {}, owner: null, dedupeKey: "idem" }, event: { type: "x" } }],
] as const) {
  const key = `corpus-${label}`;
  const at = (w: RouteWorld) => url.replace(":runId", label === "unwind" ? w.ids.unwoundRunId : w.ids.runId);
  const withRun = (w: RouteWorld, body: unknown) => json(body).replace('"dedupeKey":"idem"', `"dedupeKey":"run:${w.ids.runId}:idem"`);
  cases.push({
    name: `${label}: an Idempotency-Key reused with another body`,
    who: "agentA",
    field: "",
    statuses: [422],
    before: (w) => ({ method: "POST", url: at(w), body: withRun(w, first), headers: { "idempotency-key": key } }),
    request: (w) => ({ method: "POST", url: at(w), body: withRun(w, second), headers: { "idempotency-key": key } }),
  });
}
// The simulated systems: the same error shape, the field named.
cases.push(
  { name: "sim rpc: an unknown field", who: "anonymous", field: "body.sytem", request: () => ({ method: "POST", url: "/api/sim/rpc", body: json({ system: "crm", method: "get", sytem: "x" }) }) },
  { name: "sim rpc: an unknown system", who: "anonymous", field: "body.system", request: () => ({ method: "POST", url: "/api/sim/rpc", body: json({ system: "world", method: "get" }) }) },
  { name: "sim rpc: not JSON", who: "anonymous", field: "body", request: () => ({ method: "POST", url: "/api/sim/rpc", body: "{nope" }) },
  { name: "sim rpc: over 64 KiB", who: "anonymous", field: "body", statuses: [413], request: () => ({ method: "POST", url: "/api/sim/rpc", body: json({ system: "crm", method: "get", args: ["x".repeat(70_000)] }) }) },
  { name: "sim faults: an unknown op", who: "anonymous", field: "body.op", request: () => ({ method: "POST", url: "/api/sim/faults", body: json({ op: "nope", fault: {} }) }) },
  { name: "sim search-lag: ms=-1", who: "anonymous", field: "body.ms", request: () => ({ method: "POST", url: "/api/sim/search-lag", body: json({ ms: -1 }) }) },
  { name: "sim reset: an unknown field", who: "anonymous", field: "body.searchLag", request: () => ({ method: "POST", url: "/api/sim/reset", body: json({ searchLag: 1 }) }) },
  { name: "sim ledger: outcome=maybe", who: "anonymous", field: "query.outcome", request: () => ({ method: "GET", url: "/api/sim/ledger?outcome=maybe" }) },
);

let world: RouteWorld;
beforeAll(async () => {
  world = await seedRouteWorld(await getPrisma(), "corpus");
}, 60_000);

describe("bad-input corpus", () => {
  it("answers every bad request with a 4xx in the one error shape, naming the field, and writes nothing (a 403 only its attempt, on the token's audit chain)", async () => {
    expect(cases.length).toBeGreaterThanOrEqual(100);
    const prisma = await getPrisma();
    const serverErrors: string[] = [];
    const wrongStatus: string[] = [];
    const withoutField: string[] = [];
    const changed: string[] = [];
    let last: Record<string, string> | undefined;
    for (const c of cases) {
      if (c.before) {
        const first = await send(world, c.who, c.before(world));
        expect(first.status, `${c.name} (first call): ${first.text.slice(0, 300)}`).toBeLessThan(300);
        last = undefined;
      }
      const before = (last ??= await snapshotTables(prisma));
      const res = await send(world, c.who, c.request(world));
      last = await snapshotTables(prisma);
      const line = `${c.name}: ${res.status} ${res.text.slice(0, 300)}`;
      if (res.status >= 500) serverErrors.push(line);
      else if (!(c.statuses ?? [400]).includes(res.status)) wrongStatus.push(line);
      const error = res.json?.error;
      const shaped = typeof error?.code === "string" && typeof error?.message === "string" && Array.isArray(error?.details);
      const named = c.field === "" || (shaped && (error.details as { path?: unknown }[]).some((d) => typeof d.path === "string" && (d.path === c.field || d.path.startsWith(`${c.field}.`))));
      if (res.status >= 400 && res.status < 500 && (!shaped || !named)) withoutField.push(line);
      const tables = changedTables(before, last);
      if (tables.length > 0) changed.push(`${line} changed ${tables.join(", ")}`);
    }
    console.log(`bad-input corpus: cases=${cases.length} 5xx=${serverErrors.length} 4xx without field=${withoutField.length} rows changed=${changed.length}`);
    for (const line of [...serverErrors, ...wrongStatus, ...withoutField, ...changed]) console.log(`  finding: ${line}`);
    expect(serverErrors, "5xx").toEqual([]);
    expect(wrongStatus, "answers other than the expected 4xx").toEqual([]);
    expect(withoutField, "4xx without the error shape or the field").toEqual([]);
    expect(changed, "rows changed").toEqual([]);
  }, 240_000);
});
