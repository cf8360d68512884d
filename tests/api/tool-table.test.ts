/**
 * The tool table as admins keep it and agents meet it, through the real route handlers on a real
 * database: every edit a version with its diff and audit event; bad edits and manifests refused by
 * field with nothing changed; a disabled tool refused at the intent; a declared tool held until an
 * admin accepts it; an approval made stale by an edit. Effects are counted in the simulated ledger.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import * as declarationsRoute from "@/app/api/v1/tools/declarations/route";
import * as toolRoute from "@/app/api/dashboard/admin/tools/[name]/route";
import * as toolsRoute from "@/app/api/dashboard/admin/tools/route";
import { runWithSessionReader } from "@/lib/server/auth/current-user";
import type { Role } from "@/lib/server/auth/roles";
import { HttpSagaStore } from "@/packages/client/src/agent/client/http-store";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { syncToolPolicies } from "@/lib/server/tools/sync-tool-policies";
import { ManualClock } from "@/packages/client/src/saga/clock";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import { ToolRegistry } from "@/packages/client/src/saga/tools";
import { World } from "@/lib/demo/sim";
import { createUser } from "@/lib/server/users/create-user";
import { routeFetch } from "../support/api-router";
import { TEAM_MANIFEST, teamRegistry } from "../support/team-connector";
import { call, makeToken, useTestDatabase, type CallResult } from "./api-test-kit";
import { ReviewerEngine } from "@/packages/client/src/saga/reviewer-engine";

const getPrisma = useTestDatabase("tool-table");
const users: Partial<Record<Role, string>> = {};
const emails: Partial<Record<Role, string>> = {};

beforeAll(async () => {
  const prisma = await getPrisma();
  await syncToolPolicies(prisma, createSupportToolRegistry(new World()), "system:test");
  for (const role of ["admin", "reviewer", "support", "viewer"] as const) {
    const user = await createUser(prisma, { email: `${role}-tools@example.com`, name: `${role} person`, role, password: "correct horse battery", by: { type: "system", id: "test" } });
    users[role] = user.id;
    emails[role] = user.email;
  }
});

/** Calls a dashboard route as `role` (same-origin, like the browser). */
function as(role: Role, handler: Parameters<typeof call>[0], path: string, options: { body?: unknown; params?: Record<string, string> } = {}): Promise<CallResult> {
  return runWithSessionReader(async () => users[role] ?? null, () => call(handler, path, { ...options, headers: options.body === undefined ? {} : { origin: "http://localhost" } }));
}

function edit(role: Role, name: string, body: unknown) {
  return as(role, toolRoute.POST, `/api/dashboard/admin/tools/${name}`, { body, params: { name } });
}

async function row(name: string) {
  return (await getPrisma()).toolPolicy.findUniqueOrThrow({ where: { name } });
}

describe("the tool table", () => {
  it("a connector's tools enter it reviewed, at version 1, with its compensators and usable correction templates", async () => {
    const prisma = await getPrisma();
    expect(await row("send_email")).toMatchObject({ status: "REVIEWED", policyVersion: 1, lookupAvailable: true, correctionSubject: "Correction: {{subject}}" });
    // charge_card's correction computes from its arguments (cents to euros): no template is made up for it.
    expect(await row("charge_card")).toMatchObject({ compensator: "refund_charge", correctionSubject: null });
    expect(await row("search_orders")).toMatchObject({ toolClass: "PURE", lookupAvailable: false });
    expect((await prisma.compensator.findMany({ select: { name: true } })).map((c) => c.name)).toEqual(expect.arrayContaining(["refund_charge", "close_ticket", "delete_email_draft"]));
    expect(await prisma.toolPolicyVersion.findMany({ where: { toolName: "send_email" }, select: { version: true, change: true } })).toEqual([{ version: 1, change: "created" }]);
  });

  it("an admin's edit is a new version with who, when and the diff; history and audit show it", async () => {
    const before = await row("update_crm_record");
    const res = await edit("admin", "update_crm_record", { expectedVersion: before.policyVersion, changes: { owner: "crm-team", revocationWindowSec: 7200 }, reason: "crm team owns it now", verified: true });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ ok: true, changed: ["owner", "revocation window"], tool: { owner: "crm-team", policyVersion: before.policyVersion + 1, verifiedBy: `user:${emails.admin}` } });

    const after = await row("update_crm_record");
    expect([after.owner, after.revocationWindowSec, after.policyVersion, after.updatedBy]).toEqual(["crm-team", 7200, before.policyVersion + 1, `user:${emails.admin}`]);
    const version = await (await getPrisma()).toolPolicyVersion.findUniqueOrThrow({ where: { toolName_version: { toolName: "update_crm_record", version: after.policyVersion } } });
    expect(version).toMatchObject({ change: "edited", changedBy: `user:${emails.admin}`, reason: "crm team owns it now", diff: { owner: { from: before.owner, to: "crm-team" }, revocationWindowSec: { from: before.revocationWindowSec, to: 7200 } } });
    const audit = await (await getPrisma()).auditEvent.findMany({ where: { scope: "tool:update_crm_record" }, orderBy: { seq: "asc" } });
    expect(audit.map((e) => e.type)).toEqual(["tool.created", "tool.edited"]);

    const detail = await as("viewer", toolRoute.GET, "/api/dashboard/admin/tools/update_crm_record", { params: { name: "update_crm_record" } });
    expect(detail.status).toBe(200);
    expect(detail.json.canEdit).toBe(false);
    expect(detail.json.history.map((v: { version: number; change: string }) => [v.version, v.change])).toEqual([[after.policyVersion, "edited"], [1, "created"]]);
  });

  it("bad edits get a 4xx naming the field, and nothing stored changes", async () => {
    const before = await row("charge_card");
    const versions = await (await getPrisma()).toolPolicyVersion.count({ where: { toolName: "charge_card" } });
    const cases: [unknown, string][] = [
      [{ compensator: "void_everything" }, "body.changes.compensator"],
      [{ revocationWindowSec: -60 }, "body.changes.revocationWindowSec"],
      [{ toolClass: "REVERSIBLE", compensator: null }, "body.changes.compensator"],
      [{ toolClass: "IRREVERSIBLE", owner: null }, "body.changes.owner"],
      [{ revokeRoles: ["viewer"] }, "body.changes.revokeRoles"],
      [{ toolClass: "MAYBE" }, "body.changes.toolClass"],
    ];
    for (const [changes, path] of cases) {
      const res = await edit("admin", "charge_card", { expectedVersion: before.policyVersion, changes });
      expect(res.status, JSON.stringify(changes)).toBe(400);
      expect(res.json.error.details.map((d: { path: string }) => d.path.replace(/^changes\./, "body.changes."))).toContain(path);
    }
    // A PURE tool made logged: its connector has no lookup by key, so reconcile could not work.
    const pure = await row("search_orders");
    const logged = await edit("admin", "search_orders", { expectedVersion: pure.policyVersion, changes: { toolClass: "REVERSIBLE", compensator: "delete_email_draft" } });
    expect(logged.status).toBe(400);
    expect(logged.json.error.details[0]).toMatchObject({ path: "changes.toolClass", message: expect.stringContaining("cannot look an effect up by its step key") });

    const after = await row("charge_card");
    expect(after).toEqual(before);
    expect(await (await getPrisma()).toolPolicyVersion.count({ where: { toolName: "charge_card" } })).toBe(versions);
  });

  it("of two admins editing at once, the second is told who changed it, and nothing of theirs is written", async () => {
    const loaded = await row("reship_order");
    expect((await edit("admin", "reship_order", { expectedVersion: loaded.policyVersion, changes: { description: "first" } })).json.ok).toBe(true);
    const late = await edit("admin", "reship_order", { expectedVersion: loaded.policyVersion, changes: { description: "second" } });
    expect(late.json).toMatchObject({ ok: false, reason: "version_changed", current: { description: "first", policyVersion: loaded.policyVersion + 1 } });
    expect((await row("reship_order")).description).toBe("first");
  });

  it("reviewer, support and viewer may read the table but get 403 on every edit", async () => {
    const before = await row("create_ticket");
    for (const role of ["reviewer", "support", "viewer"] as const) {
      expect((await as(role, toolsRoute.GET, "/api/dashboard/admin/tools")).status).toBe(200);
      const res = await edit(role, "create_ticket", { expectedVersion: before.policyVersion, changes: { owner: role } });
      expect(res.status).toBe(403);
      expect(res.json.error.message).toContain(`Your role (${role}) cannot edit the tool table`);
    }
    expect(await row("create_ticket")).toEqual(before);
    // Signed out: 401.
    expect((await runWithSessionReader(async () => null, () => call(toolsRoute.GET, "/api/dashboard/admin/tools"))).status).toBe(401);
  });
});

/** An agent over the HTTP API with `registry`'s connectors on `world`. */
async function agentWith(registry: ToolRegistry, tools: string[], name?: string) {
  const token = await makeToken(tools, name);
  // Each outcome in its own request, recorded before the call returns: these look at the log right
  // after a call (tests/api/pipelined-calls.test.ts covers the client's default, outcome with the next call).
  const store = new HttpSagaStore({ baseUrl: "http://sagaboard.test", token: token.secret, fetch: routeFetch, outcomeLingerMs: 0 });
  return { token, engine: new SagaEngine({ store, registry, clock: new ManualClock(), recheckAfterMs: 10, backoffMs: 1 }) };
}

describe("what agents meet", () => {
  it("a disabled tool is refused at the intent, naming who disabled it; an in-flight step still records its outcome", async () => {
    const world = new World();
    const registry = createSupportToolRegistry(world);
    const { engine } = await agentWith(registry, ["create_ticket_draft", "create_email_draft"]);
    const run = await engine.startRun({ title: "disable me", agent: "x" });
    expect(await run.call("create_ticket_draft", { summary: "before", orderId: "1182" })).toMatchObject({ status: "ok" });

    const loaded = await row("create_ticket_draft");
    expect((await edit("admin", "create_ticket_draft", { expectedVersion: loaded.policyVersion, changes: { status: "DISABLED" }, reason: "provider outage" })).json.ok).toBe(true);
    expect(await row("create_ticket_draft")).toMatchObject({ status: "DISABLED", disabledBy: `user:${emails.admin}` });

    const refused = await run.call("create_ticket_draft", { summary: "after", orderId: "1182" }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: "TOOL_DISABLED", message: expect.stringContaining(`disabled in the tool table by user:${emails.admin}`) });
    const steps = await (await getPrisma()).step.findMany({ where: { runId: run.runId } });
    expect(steps.map((s) => [s.tool, s.status])).toEqual([["create_ticket_draft", "CONFIRMED"]]);
    expect(world.ledger.count({ op: "ticketing.createDraft", outcome: "effect" })).toBe(1);

    // Enabled again, the next call goes through.
    const disabled = await row("create_ticket_draft");
    expect((await edit("admin", "create_ticket_draft", { expectedVersion: disabled.policyVersion, changes: { status: "REVIEWED" } })).json.ok).toBe(true);
    expect(await run.call("create_ticket_draft", { summary: "after", orderId: "1182" })).toMatchObject({ status: "ok" });
    const versions = await (await getPrisma()).toolPolicyVersion.findMany({ where: { toolName: "create_ticket_draft" }, orderBy: { version: "asc" } });
    expect(versions.map((v) => v.change)).toEqual(["created", "disabled", "enabled"]);
  });

  it("an approval made before an admin's edit is stale: the agent's next call of that tool needs a fresh one", async () => {
    const world = new World();
    const registry = createSupportToolRegistry(world);
    const { engine } = await agentWith(registry, ["create_ticket_draft", "authorize_payment", "capture_payment"]);
    const server = new ReviewerEngine({ store: new PrismaSagaStore(await getPrisma()), registry });
    const run = await engine.startRun({ title: "stale approval", agent: "x" });
    const hold = await run.call("authorize_payment", { customerId: "cus_bo", amount: 1800, currency: "eur" });
    if (hold.status !== "ok" || !hold.externalRef) throw new Error(`authorisation should stage: ${JSON.stringify(hold)}`);
    const capture = { paymentIntentId: hold.externalRef, amount: 1800 };
    const pivot = await run.requestPivot({ summary: "Capture it.", plan: [{ tool: "capture_payment", args: capture }] });
    await server.decidePivot(pivot.id, { approve: true, actor: { type: "user", id: "rita@example.com" }, planHash: pivot.planHash });
    expect((await run.awaitPivot(pivot.id, { timeoutMs: 2000, pollMs: 10 })).status).toBe("APPROVED");

    // After the approval, an admin makes capture_payment irreversible.
    const loaded = await row("capture_payment");
    const res = await edit("admin", "capture_payment", {
      expectedVersion: loaded.policyVersion,
      changes: { toolClass: "IRREVERSIBLE", compensator: null, owner: "payments-team", correctionSubject: "Correction: charge of {{amount}}", correctionBody: "We charged {{amount}} by mistake." },
    });
    expect(res.json.ok).toBe(true);

    const next = await run.call("capture_payment", capture);
    expect(next).toMatchObject({ status: "approval_required", reason: "POLICY_CHANGED" });
    expect(world.ledger.count({ op: "payments.capture", outcome: "effect" })).toBe(0);
    expect(await (await getPrisma()).step.count({ where: { runId: run.runId, tool: "capture_payment" } })).toBe(0);

    // A reviewer's fresh approval of the held call lets it run, once, under the new policy.
    if (next.status !== "approval_required" || !next.escalationId) throw new Error("the capture should be held");
    await server.decideHeldCall(next.escalationId, { approve: true, actor: { type: "user", id: "rita@example.com" } });
    expect(await run.call("capture_payment", capture)).toMatchObject({ status: "ok" });
    const captured = await (await getPrisma()).step.findFirstOrThrow({ where: { runId: run.runId, tool: "capture_payment" } });
    expect(captured).toMatchObject({ toolClass: "IRREVERSIBLE", policyVersion: loaded.policyVersion + 1, phase: "APPROVED_HOLD", correction: { subject: "Correction: charge of 1800" } });
    expect(world.ledger.count({ key: captured.stepKey, outcome: "effect" })).toBe(1);
  });
});

describe("declared tools", () => {
  const acmeRegistry = teamRegistry;
  const manifest = TEAM_MANIFEST;

  it("a malformed manifest gets a 400 naming each field, and nothing is stored", async () => {
    const { token } = await agentWith(new ToolRegistry(), ["charge_card"], "acme-bad");
    const bad = {
      tools: [
        { name: "send_fax", class: "IRREVERSIBLE", lookup: true },
        { name: "hold_room", class: "COMPENSATABLE", lookup: false, compensation: { tool: "nobody_runs_this" } },
        { name: "other-team.steal", class: "PURE", lookup: false },
        { name: "x", class: "SOMETIMES", lookup: true },
      ],
    };
    const res = await call(declarationsRoute.POST, "/api/v1/tools/declarations", { secret: token.secret, body: bad });
    expect(res.status).toBe(400);
    expect(res.json.error.details.map((d: { path: string }) => d.path)).toEqual(["body.tools.3.class"]);
    // A name in another team's namespace is an attempt to cross it: 403 naming the field and where, before anything else.
    const crossing = await call(declarationsRoute.POST, "/api/v1/tools/declarations", { secret: token.secret, body: { tools: bad.tools.slice(0, 3) } });
    expect(crossing.status).toBe(403);
    expect(crossing.json.error).toMatchObject({ code: "FORBIDDEN", details: [{ path: "tools.2.name", message: expect.stringContaining('in the namespace "other-team", not "acme-bad"') }] });
    const res2 = await call(declarationsRoute.POST, "/api/v1/tools/declarations", { secret: token.secret, body: { tools: bad.tools.slice(0, 2) } });
    expect(res2.status).toBe(400);
    expect(res2.json.error.details.map((d: { path: string }) => d.path).sort()).toEqual(["tools.0.correction", "tools.0.owner", "tools.1.compensation.tool", "tools.1.lookup"]);
    expect(await (await getPrisma()).toolPolicy.count({ where: { namespace: "acme-bad" } })).toBe(0);
  });

  it("a declared tool lands unreviewed and its call is held until an admin accepts it; then it runs once", async () => {
    const world = new World();
    const ns = "acme";
    const registry = acmeRegistry(world, ns);
    const { token, engine } = await agentWith(registry, ["charge_card"], ns);
    const declared = await call(declarationsRoute.POST, "/api/v1/tools/declarations", { secret: token.secret, body: manifest });
    expect(declared.status).toBe(200);
    expect(declared.json).toMatchObject({ namespace: ns, tools: [{ name: "acme.open_case", status: "UNREVIEWED", policyVersion: 1, outcome: "created" }], compensators: ["acme.close_case"] });
    const prisma = await getPrisma();
    // The row in force is the strictest until an admin accepts: what the team declared waits beside it as a proposal.
    expect(await row("acme.open_case")).toMatchObject({ status: "UNREVIEWED", toolClass: "IRREVERSIBLE", compensator: null, owner: null, namespace: ns, lookupAvailable: true, declaredBy: ns });
    expect((await row("acme.open_case")).proposal).toMatchObject({ toolClass: "COMPENSATABLE", compensator: "acme.close_case", owner: "team-ops" });
    expect((await prisma.agentToken.findUniqueOrThrow({ where: { id: token.id } })).tools).toContain("acme.open_case");

    const run = await engine.startRun({ title: "declared", agent: ns });
    const held = await run.call("acme.open_case", { summary: "Broken kettle", orderId: "2001" });
    expect(held).toMatchObject({ status: "approval_required", reason: "UNREVIEWED" });
    if (held.status !== "approval_required") throw new Error("held");
    expect(world.ledger.count({ outcome: "effect" })).toBe(0);
    expect(await prisma.escalation.findUniqueOrThrow({ where: { id: held.escalationId ?? "" } })).toMatchObject({ status: "OPEN", kind: "APPROVAL_REQUIRED" });

    // The admin sees declared and accepted side by side, and accepts.
    const detail = await as("admin", toolRoute.GET, "/api/dashboard/admin/tools/acme.open_case", { params: { name: "acme.open_case" } });
    expect(detail.json).toMatchObject({ declared: { name: "acme.open_case", class: "COMPENSATABLE" }, declaredBy: ns, tool: { status: "UNREVIEWED" } });
    const accepted = await edit("admin", "acme.open_case", { expectedVersion: 1, changes: { status: "REVIEWED" } });
    expect(accepted.json).toMatchObject({ ok: true, tool: { status: "REVIEWED", policyVersion: 2, toolClass: "COMPENSATABLE", compensator: "acme.close_case", owner: "team-ops", proposalWaiting: false } });
    // The hold it made moot is resolved, not left in the queue.
    expect(await prisma.escalation.findUniqueOrThrow({ where: { id: held.escalationId ?? "" } })).toMatchObject({ status: "RESOLVED", resolvedBy: emails.admin });

    const ran = await run.call("acme.open_case", { summary: "Broken kettle", orderId: "2001" });
    expect(ran).toMatchObject({ status: "ok" });
    const step = await prisma.step.findFirstOrThrow({ where: { runId: run.runId, tool: "acme.open_case" } });
    expect(step).toMatchObject({ status: "CONFIRMED", toolClass: "COMPENSATABLE", policyVersion: 2 });
    expect(world.ledger.count({ key: step.stepKey, outcome: "effect" })).toBe(1);

    // A second declaration does not undo the review: the accepted row stands, what differs waits as a proposal.
    const again = await call(declarationsRoute.POST, "/api/v1/tools/declarations", { secret: token.secret, body: { ...manifest, tools: [{ ...manifest.tools[0], class: "REVERSIBLE" }] } });
    expect(again.json.tools[0]).toMatchObject({ status: "REVIEWED", outcome: "recorded", policyVersion: 2, proposed: ["toolClass"] });
    expect(await row("acme.open_case")).toMatchObject({ toolClass: "COMPENSATABLE", policyVersion: 2, declared: expect.objectContaining({ class: "REVERSIBLE" }), proposal: { toolClass: "REVERSIBLE" } });
  });

  it("a declared tool without an argument schema: its page says so, accepting it needs a knowing yes, and until then its calls are held", async () => {
    const world = new World();
    const ns = `noschema${Date.now().toString(36)}`;
    const { token, engine } = await agentWith(teamRegistry(world, ns), ["charge_card"], ns);
    const bare = { ...TEAM_MANIFEST, tools: TEAM_MANIFEST.tools.map(({ argsSchema: _dropped, ...t }) => t) };
    expect((await call(declarationsRoute.POST, "/api/v1/tools/declarations", { secret: token.secret, body: bare })).status).toBe(200);
    const name = `${ns}.open_case`;
    const detail = await as("admin", toolRoute.GET, `/api/dashboard/admin/tools/${name}`, { params: { name } });
    expect(detail.json).toMatchObject({ argsSchemaMissing: true, tool: { status: "UNREVIEWED" } });

    const run = await engine.startRun({ title: "schemaless", agent: ns });
    expect(await run.call(name, { summary: "Broken kettle", orderId: "2001" })).toMatchObject({ status: "approval_required", reason: "UNREVIEWED" });
    const plain = await edit("admin", name, { expectedVersion: 1, changes: { status: "REVIEWED" } });
    expect(plain.status).toBe(400);
    expect(plain.json.error.details).toEqual([{ path: "acceptWithoutArgsSchema", message: expect.stringContaining("without an argument schema") }]);
    expect(await row(name)).toMatchObject({ status: "UNREVIEWED", policyVersion: 1 });
    expect(await run.call(name, { summary: "Broken kettle", orderId: "2001" })).toMatchObject({ status: "approval_required", reason: "UNREVIEWED" });
    expect(world.ledger.count({ outcome: "effect" })).toBe(0);

    const knowing = await edit("admin", name, { expectedVersion: 1, changes: { status: "REVIEWED" }, acceptWithoutArgsSchema: true });
    expect(knowing.json).toMatchObject({ ok: true, tool: { status: "REVIEWED", policyVersion: 2 } });
    const history = await (await getPrisma()).toolPolicyVersion.findFirstOrThrow({ where: { toolName: name, version: 2 } });
    expect(history.reason).toContain("accepted without an argument schema");
    // A tool declared with one is accepted as before, and its page says calls are checked.
    const withSchema = await as("admin", toolRoute.GET, "/api/dashboard/admin/tools/acme.open_case", { params: { name: "acme.open_case" } });
    expect(withSchema.json.argsSchemaMissing).toBe(false);
  });

  it("namespaces are exact: token x may not declare x.ops.open_case (it would squat token x.ops's namespace); x.ops declares it; a worker token may not declare at all", async () => {
    const prisma = await getPrisma();
    const x = await makeToken(["charge_card"], `sq${Date.now().toString(36)}`);
    const nested = `${x.name}.ops.open_case`;
    const tool = (name: string) => ({ name, class: "PURE", lookup: false, argsSchema: { type: "object" } });
    const squat = await call(declarationsRoute.POST, "/api/v1/tools/declarations", { secret: x.secret, body: { tools: [tool(nested), tool("ops.open_case")] } });
    expect(squat.status).toBe(403);
    expect(squat.json.error.details).toEqual([
      { path: "tools.0.name", message: expect.stringContaining(`is in the namespace "${x.name}.ops", not "${x.name}"`) },
      { path: "tools.1.name", message: expect.stringContaining(`is in the namespace "ops", not "${x.name}"`) },
    ]);
    expect(await prisma.toolPolicy.count({ where: { name: nested } })).toBe(0);
    const owner = await makeToken(["charge_card"], `${x.name}.ops`);
    const own = await call(declarationsRoute.POST, "/api/v1/tools/declarations", { secret: owner.secret, body: { tools: [tool("open_case")] } });
    expect(own.status).toBe(200);
    expect(own.json.tools).toEqual([expect.objectContaining({ name: nested, outcome: "created" })]);

    const { createAgentToken } = await import("@/lib/server/tokens/create-agent-token");
    const worker = await createAgentToken(prisma, { name: `wk${Date.now().toString(36)}`, tools: ["charge_card"], role: "worker", createdBy: "admin@example.com" });
    const widened = await call(declarationsRoute.POST, "/api/v1/tools/declarations", { secret: worker.secret, body: { tools: [tool("refund_all")] } });
    expect(widened.status).toBe(403);
    expect(widened.json.error.message).toContain("Worker tokens cannot declare tools");
    expect(await prisma.toolPolicy.count({ where: { name: `${worker.token.name}.refund_all` } })).toBe(0);
    expect((await prisma.agentToken.findUniqueOrThrow({ where: { id: worker.token.id } })).tools).toEqual(["charge_card"]);
  });

  it("a worker claims unwind work only for tools it holds: another team's tool of a similar name is not claimed", async () => {
    const prisma = await getPrisma();
    const { claimTasks } = await import("@/lib/server/worker/claim-tasks");
    const { enqueueTask } = await import("@/lib/server/worker/enqueue-task");
    const run = await new PrismaSagaStore(prisma).createRun({ id: `run_claim_${Date.now()}`, title: "two teams", agent: "acme", onBehalfOf: null, metadata: {} }, { type: "run.started", actor: { type: "agent", id: "acme" }, data: {} });
    await enqueueTask(prisma, { kind: "UNWIND", runId: run.id, tools: ["acme.open_case"], payload: { reason: "test" }, dedupeKey: `unwind:${run.id}`, actor: { type: "agent", id: "acme" } });
    // The demo worker holds create_ticket and close_ticket, not acme's tools.
    const demo = await claimTasks(prisma, { workerId: "demo-worker", tools: createSupportToolRegistry(new World()).list().map((t) => t.name), max: 10, leaseMs: 1000 });
    expect(demo.filter((t) => t.runId === run.id)).toEqual([]);
    const acme = await claimTasks(prisma, { workerId: "acme-worker", tools: ["acme.open_case"], max: 10, leaseMs: 1000 });
    expect(acme.map((t) => t.runId)).toContain(run.id);
  });
});

describe("npm run tools", () => {
  const exec = promisify(execFile);
  const cli = (...args: string[]) =>
    exec(process.execPath, ["--import", "tsx", "scripts/tools.ts", ...args], { env: { ...process.env }, cwd: process.cwd() }).then(
      (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
    );
  const file = (name: string, content: unknown) => {
    const target = path.join(mkdtempSync(path.join(tmpdir(), "sgb-manifest-")), name);
    writeFileSync(target, typeof content === "string" ? content : JSON.stringify(content));
    return target;
  };

  it("declares a manifest file into a namespace as unreviewed, and refuses a malformed one naming the field", async () => {
    const good = file("good.json", { tools: [{ name: "book_room", class: "IRREVERSIBLE", lookup: true, owner: "hotel-ops", correction: { subject: "About your booking {{room}}", body: "We booked {{room}} by mistake." } }] });
    const declared = await cli("declare", "--file", good, "--namespace", "hotel", "--by", "ops@example.com");
    expect(declared.code, declared.stderr).toBe(0);
    expect(declared.stdout).toContain("hotel.book_room\tv1\tcreated, UNREVIEWED: every call is held until an admin accepts it");
    expect(await row("hotel.book_room")).toMatchObject({ status: "UNREVIEWED", toolClass: "IRREVERSIBLE", namespace: "hotel", declaredBy: "ops@example.com" });

    const bad = file("bad.json", { tools: [{ name: "cancel_room", class: "COMPENSATABLE", lookup: true, compensation: { tool: "nobody_runs_this" } }] });
    const [refused, notJson, usage] = await Promise.all([cli("declare", "--file", bad, "--namespace", "hotel"), cli("declare", "--file", file("x.json", "{nope"), "--namespace", "hotel"), cli("declare", "--namespace", "hotel")]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/tools\.0\.compensation\.tool: No connector registers the compensator "hotel\.nobody_runs_this"/);
    expect([notJson.code, usage.code]).toEqual([2, 2]);
    expect(notJson.stderr).toContain("is not JSON");
    expect(usage.stderr).toContain("Missing --file.");
    expect(await (await getPrisma()).toolPolicy.count({ where: { name: "hotel.cancel_room" } })).toBe(0);

    const listed = await cli("list");
    expect(listed.stdout).toMatch(/hotel\.book_room\tIRREVERSIBLE\tUNREVIEWED\tv1/);
  });

  it("review from the terminal: one tool with its class, every read-only tool of a namespace as PURE, and a namespace whose read-only hints an admin trusts", async () => {
    const prisma = await getPrisma();
    const ns = `term${Date.now().toString(36)}`;
    const tools = [
      { name: "read_page", class: "PURE", lookup: false, argsSchema: { type: "object" }, hints: { readOnly: true } },
      { name: "wipe_page", class: "PURE", lookup: false, argsSchema: { type: "object" }, hints: { readOnly: true, destructive: true } },
      { name: "open_page", class: "IRREVERSIBLE", lookup: true, argsSchema: { type: "object" }, owner: "pages", correction: { subject: "About a page", body: "We opened a page by mistake." } },
    ];
    const declared = await cli("declare", "--file", file("pages.json", { tools }), "--namespace", ns);
    expect(declared.code, declared.stderr).toBe(0);
    const bulk = await cli("review", "--namespace", ns, "--read-only", "--by", "ops@example.com");
    expect(bulk.code, bulk.stderr).toBe(0);
    expect(bulk.stdout).toContain(`${ns}.read_page\tv2\tPURE, reviewed`);
    expect(bulk.stdout).toContain("2 other unreviewed tool(s)");
    expect(await row(`${ns}.read_page`)).toMatchObject({ toolClass: "PURE", status: "REVIEWED", updatedBy: "user:ops@example.com" });
    expect(await row(`${ns}.wipe_page`)).toMatchObject({ status: "UNREVIEWED" }); // destructive wins over read-only
    const one = await cli("review", `${ns}.open_page`, "--class", "irreversible", "--reason", "it reaches people");
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toContain(`${ns}.open_page is IRREVERSIBLE, REVIEWED`);
    expect(await row(`${ns}.open_page`)).toMatchObject({ toolClass: "IRREVERSIBLE", status: "REVIEWED", owner: "pages" });
    const wrong = await cli("review", `${ns}.wipe_page`, "--class", "COMPENSATABLE");
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toMatch(/compensat/i);

    // Trusted: a new read-only tool of the namespace enters reviewed as PURE, saying so; a destructive one is held.
    const trusted = await cli("trust-read-only", ns, "--by", "ops@example.com");
    expect(trusted.code, trusted.stderr).toBe(0);
    const later = await cli("declare", "--file", file("more.json", { tools: [{ ...tools[0], name: "read_index" }, { ...tools[1], name: "wipe_index" }] }), "--namespace", ns);
    expect(later.code, later.stderr).toBe(0);
    expect(await row(`${ns}.read_index`)).toMatchObject({ toolClass: "PURE", status: "REVIEWED", verifiedBy: "policy:tools.trustReadOnlyHints" });
    expect(await row(`${ns}.wipe_index`)).toMatchObject({ toolClass: "IRREVERSIBLE", status: "UNREVIEWED" });
    const history = await prisma.toolPolicyVersion.findFirstOrThrow({ where: { toolName: `${ns}.read_index` } });
    expect(history.reason).toContain(`user:ops@example.com trusts the read-only hints of the namespace "${ns}"`);
    expect((await prisma.auditEvent.findFirstOrThrow({ where: { scope: "setting:tools.trustReadOnlyHints", type: "setting.changed" } })).data).toMatchObject({ namespace: ns, trusted: true });
    expect((await cli("trust-read-only", ns, "--off")).code).toBe(0);
    await cli("declare", "--file", file("last.json", { tools: [{ ...tools[0], name: "read_more" }] }), "--namespace", ns);
    expect(await row(`${ns}.read_more`)).toMatchObject({ toolClass: "IRREVERSIBLE", status: "UNREVIEWED" });
  }, 180_000);
});
