/**
 * The agent side cannot weaken its own controls, tried as an attacker holding a team's token would,
 * through the real route handlers on a real database (SQLite, or PostgreSQL with SAGABOARD_TEST_PG=1):
 * a declaration never changes a reviewed row (it waits as a proposal an admin accepts or refuses); a
 * new tool declared PURE is held and decided as IRREVERSIBLE until an admin reviews it; the tool table,
 * not the agent, decides who settles an escalation; a reference into another team's namespace is a
 * 403 naming the field, recorded as an attempt on the token's audit chain; a manifest's compensation
 * template is used when the agent sends none; the audience an agent states can widen, never narrow.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { runWithSessionReader } from "@/lib/server/auth/current-user";
import type { Role } from "@/lib/server/auth/roles";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { World } from "@/lib/demo/sim";
import { syncToolPolicies } from "@/lib/server/tools/sync-tool-policies";
import { fillAudienceRules } from "@/lib/server/tools/fill-audience-rules";
import { SUPPORT_TOOL_AUDIENCES } from "@/lib/demo/connectors/tool-systems";
import { createUser } from "@/lib/server/users/create-user";
import { routeFetch } from "../support/api-router";
import { makeToken, useTestDatabase } from "./api-test-kit";

const getPrisma = useTestDatabase("trust-boundary");
const users: Partial<Record<Role, string>> = {};

beforeAll(async () => {
  const prisma = await getPrisma();
  await syncToolPolicies(prisma, createSupportToolRegistry(new World()), "system:test");
  await fillAudienceRules(prisma, SUPPORT_TOOL_AUDIENCES);
  for (const role of ["admin", "reviewer", "support"] as const) {
    users[role] = (await createUser(prisma, { email: `${role}-trust@example.com`, name: `${role} person`, role, password: "correct horse battery", by: { type: "system", id: "test" } })).id;
  }
});

interface Answer {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a test reads whatever the route answered
  json: any;
}

/** An agent's request with its token. */
async function agent(secret: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await routeFetch(
    new Request(`http://localhost${path}`, { method, headers: { authorization: `Bearer ${secret}`, ...(body === undefined ? {} : { "content-type": "application/json" }) }, body: body === undefined ? undefined : JSON.stringify(body) }),
  );
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

/** A person's dashboard request (same-origin, like the browser). */
async function person(role: Role, method: string, path: string, body?: unknown): Promise<Answer> {
  return runWithSessionReader(async () => users[role] ?? null, async () => {
    const res = await routeFetch(
      new Request(`http://localhost${path}`, { method, headers: body === undefined ? {} : { "content-type": "application/json", origin: "http://localhost" }, body: body === undefined ? undefined : JSON.stringify(body) }),
    );
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : null };
  });
}

const row = async (name: string) => (await getPrisma()).toolPolicy.findUniqueOrThrow({ where: { name } });

/** A team's token and its manifest entry for a case tool answered by the team's own compensator. */
async function team(label: string) {
  const ns = `${label}${Date.now().toString(36)}`;
  const token = await makeToken([], ns);
  const entry = {
    name: "open_case",
    class: "COMPENSATABLE",
    lookup: true,
    compensation: { tool: "close_case", args: { caseId: "{{orderId}}", reason: "rolled back" } },
    owner: "team-ops",
    audience: ["internal"],
    description: "Open a case in the team's queue",
    argsSchema: { type: "object", properties: { summary: { type: "string" }, orderId: { type: "string" } }, required: ["summary", "orderId"] },
  };
  const manifest = { tools: [entry], compensators: [{ name: "close_case" }] };
  return { ns, token, entry, manifest, tool: `${ns}.open_case` };
}

async function startRun(secret: string, title: string): Promise<string> {
  const res = await agent(secret, "POST", "/api/v1/runs", { title });
  expect(res.status, JSON.stringify(res.json)).toBe(201);
  return res.json.run.id as string;
}

describe("declarations are proposals", () => {
  it("a team re-declaring its accepted COMPENSATABLE tool as PURE with another owner changes nothing in force: the row, its version and the next call (logged, staged) stay as the admin left them", async () => {
    const t = await team("redecl");
    expect((await agent(t.token.secret, "POST", "/api/v1/tools/declarations", t.manifest)).status).toBe(200);
    // The admin accepts it, and narrows who may pull it back to admins.
    const accepted = await person("admin", "POST", `/api/dashboard/admin/tools/${t.tool}`, { expectedVersion: 1, changes: { status: "REVIEWED", revokeRoles: ["admin"] } });
    expect(accepted.json).toMatchObject({ ok: true, tool: { toolClass: "COMPENSATABLE", owner: "team-ops", revokeRoles: ["admin"], status: "REVIEWED", policyVersion: 2 } });
    const inForce = await row(t.tool);

    const attack = { tools: [{ ...t.entry, class: "PURE", owner: "attacker", compensation: undefined }], compensators: t.manifest.compensators };
    const redeclared = await agent(t.token.secret, "POST", "/api/v1/tools/declarations", attack);
    expect(redeclared.status).toBe(200);
    expect(redeclared.json.tools[0]).toMatchObject({ status: "REVIEWED", outcome: "recorded", policyVersion: 2, proposed: expect.arrayContaining(["toolClass", "owner"]) });
    const after = await row(t.tool);
    for (const field of ["toolClass", "owner", "revokeRoles", "compensator", "revocationWindowSec", "alwaysRequireApproval", "audienceRule", "status", "policyVersion"] as const) {
      expect(after[field], field).toEqual(inForce[field]);
    }
    expect(after.proposal).toMatchObject({ toolClass: "PURE", owner: "attacker" });
    // The agent meets the row in force: the tool is listed as COMPENSATABLE, and its call is logged and staged.
    const listed = await agent(t.token.secret, "GET", "/api/v1/tools");
    expect(listed.json.tools.find((x: { name: string }) => x.name === t.tool)).toMatchObject({ toolClass: "COMPENSATABLE", owner: "team-ops", status: "REVIEWED" });
    const runId = await startRun(t.token.secret, "after the re-declaration");
    const begun = await agent(t.token.secret, "POST", `/api/v1/runs/${runId}/calls`, { tool: t.tool, args: { summary: "kettle", orderId: "A-7" }, cursor: 0 });
    expect(begun.status, JSON.stringify(begun.json)).toBe(200);
    expect(begun.json).toMatchObject({ answer: "call", step: { toolClass: "COMPENSATABLE", policyVersion: 2 } });
    expect(await (await getPrisma()).step.count({ where: { runId } })).toBe(1);
    // The declaration and its proposal are on the tool's audit chain.
    const audit = await (await getPrisma()).auditEvent.findMany({ where: { scope: `tool:${t.tool}` }, orderBy: { seq: "asc" } });
    expect(audit.at(-1)).toMatchObject({ type: "tool.change_proposed", actor: `agent:${t.ns}` });
  });

  it("an admin sees the proposal as a diff and refuses it (the row stays) or accepts it (a new version); a stale page is told", async () => {
    const t = await team("decide");
    await agent(t.token.secret, "POST", "/api/v1/tools/declarations", t.manifest);
    expect((await person("admin", "POST", `/api/dashboard/admin/tools/${t.tool}`, { expectedVersion: 1, changes: { status: "REVIEWED" } })).json.ok).toBe(true);
    await agent(t.token.secret, "POST", "/api/v1/tools/declarations", { ...t.manifest, tools: [{ ...t.entry, owner: "team-ops-2", revocationWindowSec: 7 * 86_400 }] });

    const detail = await person("admin", "GET", `/api/dashboard/admin/tools/${t.tool}`);
    expect(detail.json.proposal).toMatchObject({ proposedBy: t.ns, changes: expect.arrayContaining([expect.objectContaining({ field: "owner", inForce: "team-ops", proposed: "team-ops-2", lowersControl: true }), expect.objectContaining({ field: "revocationWindowSec", lowersControl: true })]) });
    expect(detail.json.tool.proposalWaiting).toBe(true);
    // Only an admin decides.
    expect((await person("reviewer", "POST", `/api/dashboard/admin/tools/${t.tool}/proposal`, { expectedVersion: 2, decision: "accept" })).status).toBe(403);
    const stale = await person("admin", "POST", `/api/dashboard/admin/tools/${t.tool}/proposal`, { expectedVersion: 1, decision: "accept" });
    expect(stale.json).toMatchObject({ ok: false, reason: "version_changed" });

    const refused = await person("admin", "POST", `/api/dashboard/admin/tools/${t.tool}/proposal`, { expectedVersion: 2, decision: "refuse", reason: "ops keeps it" });
    expect(refused.json).toMatchObject({ ok: true, tool: { owner: "team-ops", policyVersion: 2, proposalWaiting: false } });
    expect((await person("admin", "POST", `/api/dashboard/admin/tools/${t.tool}/proposal`, { expectedVersion: 2, decision: "refuse" })).status).toBe(409);
    expect((await (await getPrisma()).auditEvent.findFirstOrThrow({ where: { scope: `tool:${t.tool}`, type: "tool.proposal_refused" } })).data).toMatchObject({ reason: "ops keeps it", proposedBy: t.ns });

    // The team proposes again; this time the admin accepts: a new version, with the history saying whose proposal it was.
    await agent(t.token.secret, "POST", "/api/v1/tools/declarations", { ...t.manifest, tools: [{ ...t.entry, owner: "team-ops-3" }] });
    const accepted = await person("admin", "POST", `/api/dashboard/admin/tools/${t.tool}/proposal`, { expectedVersion: 2, decision: "accept", reason: "moved teams" });
    expect(accepted.json).toMatchObject({ ok: true, changed: ["owner"], tool: { owner: "team-ops-3", policyVersion: 3, proposalWaiting: false } });
    const version = await (await getPrisma()).toolPolicyVersion.findFirstOrThrow({ where: { toolName: t.tool, version: 3 } });
    expect(version.reason).toContain(`accepted the proposal of ${t.ns}`);
  });

  it("a new tool declared PURE is held and decided as IRREVERSIBLE until an admin reviews it; only the admin's review makes it PURE", async () => {
    const t = await team("pure");
    const declared = await agent(t.token.secret, "POST", "/api/v1/tools/declarations", { tools: [{ ...t.entry, class: "PURE", compensation: undefined }], compensators: [] });
    expect(declared.json.tools[0]).toMatchObject({ status: "UNREVIEWED", outcome: "created", proposed: expect.arrayContaining(["toolClass"]) });
    expect(await row(t.tool)).toMatchObject({ toolClass: "IRREVERSIBLE", owner: null, compensator: null, status: "UNREVIEWED" });
    const listed = await agent(t.token.secret, "GET", "/api/v1/tools");
    expect(listed.json.tools.find((x: { name: string }) => x.name === t.tool)).toMatchObject({ toolClass: "IRREVERSIBLE", owner: null, status: "UNREVIEWED" });

    const runId = await startRun(t.token.secret, "a pure tool");
    const held = await agent(t.token.secret, "POST", `/api/v1/runs/${runId}/calls`, { tool: t.tool, args: { summary: "kettle", orderId: "A-8" }, cursor: 0 });
    expect(held.json).toMatchObject({ answer: "held", reason: "UNREVIEWED" });
    const escalation = await (await getPrisma()).escalation.findUniqueOrThrow({ where: { id: held.json.escalationId } });
    expect(escalation).toMatchObject({ kind: "APPROVAL_REQUIRED", owner: null, detail: expect.objectContaining({ toolClass: "IRREVERSIBLE" }) });
    expect(await (await getPrisma()).step.count({ where: { runId } })).toBe(0);

    // The admin reviews it as the team proposed: now, and only now, it is PURE (its calls are not logged).
    expect((await person("admin", "POST", `/api/dashboard/admin/tools/${t.tool}/proposal`, { expectedVersion: 1, decision: "accept" })).json).toMatchObject({ ok: true, tool: { toolClass: "PURE", status: "REVIEWED" } });
    const pure = await agent(t.token.secret, "POST", `/api/v1/runs/${runId}/calls`, { tool: t.tool, args: { summary: "kettle", orderId: "A-8" }, cursor: 0 });
    expect(pure.json.error).toMatchObject({ code: "INVALID_ARGS", message: expect.stringContaining("is PURE in the tool table") });
  });

  it("a manifest's compensation template is the compensation when the agent sends none", async () => {
    const t = await team("template");
    await agent(t.token.secret, "POST", "/api/v1/tools/declarations", t.manifest);
    expect((await person("admin", "POST", `/api/dashboard/admin/tools/${t.tool}`, { expectedVersion: 1, changes: { status: "REVIEWED" } })).json.tool).toMatchObject({ compensationArgs: { caseId: "{{orderId}}", reason: "rolled back" } });
    const runId = await startRun(t.token.secret, "template");
    const begun = await agent(t.token.secret, "POST", `/api/v1/runs/${runId}/calls`, { tool: t.tool, args: { summary: "kettle", orderId: "A-9" }, cursor: 0 });
    expect(begun.json).toMatchObject({ answer: "call" });
    const step = await (await getPrisma()).step.findFirstOrThrow({ where: { runId } });
    expect(step.compensation).toEqual({ tool: `${t.ns}.close_case`, args: { caseId: "A-9", reason: "rolled back" } });
  });
});

describe("the table decides who settles", () => {
  it("an agent naming a support team as the owner of its charge's OUTCOME_UNKNOWN does not route it there: support gets 403, the note is kept", async () => {
    const token = await makeToken(["charge_card"]);
    const runId = await startRun(token.secret, "a charge whose outcome is unknown");
    const begun = await agent(token.secret, "POST", `/api/v1/runs/${runId}/calls`, {
      tool: "charge_card",
      args: { customerId: "cus_1", amount: 700, currency: "eur", reason: "order 1" },
      cursor: 0,
      compensation: { tool: "refund_charge", args: { amount: 700 } },
    });
    expect(begun.json.answer).toBe("call");
    const stepId = begun.json.step.id as string;
    expect((await agent(token.secret, "POST", `/api/v1/steps/${stepId}/outcome`, { outcome: "unknown", message: "timed out", attempts: 1 })).status).toBe(200);

    const raised = await agent(token.secret, "POST", `/api/v1/runs/${runId}/escalations`, {
      escalation: { stepId, kind: "OUTCOME_UNKNOWN", title: "Did the charge happen?", detail: {}, owner: "support-leads", dedupeKey: `unknown:${stepId}:agent` },
      event: { type: "escalation.raised" },
    });
    expect(raised.status).toBe(201);
    const stored = await (await getPrisma()).escalation.findUniqueOrThrow({ where: { id: raised.json.escalation.id } });
    expect(stored.owner).toBe("payments-team");
    expect(stored.detail).toMatchObject({ agentNote: expect.stringContaining('suggested routing it to "support-leads"') });

    const claim = await person("support", "POST", `/api/dashboard/escalations/${stored.id}/claim`, {});
    expect(claim.status).toBe(403);
    expect(claim.json.error.message).toContain("routed to payments-team, not a support team");
    const resolve = await person("support", "POST", `/api/dashboard/escalations/${stored.id}/resolve`, { kind: "OUTCOME_UNKNOWN", outcome: "NOT_EXECUTED", evidence: "nothing in the dashboard" });
    expect(resolve.status).toBe(403);
    expect((await (await getPrisma()).step.findUniqueOrThrow({ where: { id: stepId } })).status).toBe("UNKNOWN");
    // The queue shows the owner the table names.
    const queue = await person("reviewer", "GET", `/api/dashboard/escalations/${stored.id}`);
    expect(queue.json.escalation ?? queue.json).toMatchObject({ owner: "payments-team" });
  });

  it("held calls and revokes are the server's: an agent raising APPROVAL_REQUIRED, or a key in the gate's hold: space, gets 403 naming the field and recorded as an attempt", async () => {
    const token = await makeToken(["charge_card"]);
    const runId = await startRun(token.secret, "forgery");
    const forged = await agent(token.secret, "POST", `/api/v1/runs/${runId}/escalations`, {
      escalation: { stepId: null, kind: "APPROVAL_REQUIRED", title: "Approve search_orders?", detail: { tool: "search_orders", args: {} }, owner: null, dedupeKey: `x:${runId}` },
      event: { type: "escalation.raised" },
    });
    expect(forged.status).toBe(403);
    expect(forged.json.error.details).toEqual([{ path: "escalation.kind", message: expect.stringContaining("not one an agent raises") }]);
    const squat = await agent(token.secret, "POST", `/api/v1/runs/${runId}/escalations`, {
      escalation: { stepId: null, kind: "OUTCOME_UNKNOWN", title: "t", detail: {}, owner: null, dedupeKey: `hold:${runId}:charge_card:abc` },
      event: { type: "escalation.raised" },
    });
    expect(squat.status).toBe(403);
    expect(squat.json.error.details[0].path).toBe("escalation.dedupeKey");
    expect(await (await getPrisma()).escalation.count({ where: { runId } })).toBe(0);
    const attempts = await (await getPrisma()).auditEvent.findMany({ where: { scope: `agent-token:${token.id}`, type: "agent_token.refused" }, orderBy: { seq: "asc" } });
    expect(attempts.map((a) => (a.data as { operation: string; fields: string[] }).fields)).toEqual([["escalation.kind"], ["escalation.dedupeKey"]]);
    expect(attempts[0]).toMatchObject({ actor: `agent:${token.name}` });
  });
});

describe("namespaces hold", () => {
  it("a tool cannot borrow another team's compensator: 403 naming the field and the namespace, nothing declared, the attempt on the token's chain", async () => {
    const one = await team("nsone");
    await agent(one.token.secret, "POST", "/api/v1/tools/declarations", one.manifest);
    const two = await team("nstwo");
    const borrow = await agent(two.token.secret, "POST", "/api/v1/tools/declarations", { tools: [{ ...two.entry, name: "epsilon", compensation: { tool: `${one.ns}.close_case`, args: {} } }], compensators: [] });
    expect(borrow.status).toBe(403);
    expect(borrow.json.error).toMatchObject({ code: "FORBIDDEN", details: [{ path: "tools.0.compensation.tool", message: expect.stringContaining(`is in the namespace "${one.ns}", not "${two.ns}"`) }] });
    expect(await (await getPrisma()).toolPolicy.count({ where: { namespace: two.ns } })).toBe(0);
    const attempt = await (await getPrisma()).auditEvent.findFirstOrThrow({ where: { scope: `agent-token:${two.token.id}`, type: "agent_token.refused" } });
    expect(attempt.data).toMatchObject({ operation: "declareTools", code: "FORBIDDEN", fields: ["tools.0.compensation.tool"] });
    // A compensator the server registers is shared with every team.
    const shared = await agent(two.token.secret, "POST", "/api/v1/tools/declarations", { tools: [{ ...two.entry, name: "epsilon", compensation: { tool: "close_ticket", args: {} } }], compensators: [] });
    expect(shared.status, JSON.stringify(shared.json)).toBe(200);
  });

  it("a call naming another team's compensator, or a plan naming another team's tool, is a 403 naming the field", async () => {
    const one = await team("callone");
    await agent(one.token.secret, "POST", "/api/v1/tools/declarations", one.manifest);
    const two = await team("calltwo");
    await agent(two.token.secret, "POST", "/api/v1/tools/declarations", two.manifest);
    expect((await person("admin", "POST", `/api/dashboard/admin/tools/${two.tool}`, { expectedVersion: 1, changes: { status: "REVIEWED" } })).json.ok).toBe(true);
    const runId = await startRun(two.token.secret, "crossing");
    const call = await agent(two.token.secret, "POST", `/api/v1/runs/${runId}/calls`, { tool: two.tool, args: { summary: "s", orderId: "o" }, cursor: 0, compensation: { tool: `${one.ns}.close_case`, args: {} } });
    expect(call.status).toBe(403);
    expect(call.json.error.details).toEqual([{ path: "compensation.tool", message: `crosses into the namespace "${one.ns}"` }]);
    const pivot = await agent(two.token.secret, "POST", `/api/v1/runs/${runId}/pivots`, { summary: "s", plan: [{ tool: one.tool, args: {} }] });
    expect(pivot.status).toBe(403);
    expect(pivot.json.error.details).toEqual([{ path: "plan.0.tool", message: `crosses into the namespace "${one.ns}"` }]);
    expect(await (await getPrisma()).step.count({ where: { runId } })).toBe(0);
  });
});

describe("the audience an agent states", () => {
  it("can widen the table's audience, never narrow it", async () => {
    const token = await makeToken(["send_email", "charge_card"]);
    const runId = await startRun(token.secret, "audiences");
    // send_email's rule: customer when `to` is outside the company. The agent says internal; the table says customer.
    const approval = await agent(token.secret, "POST", `/api/v1/runs/${runId}/pivots`, { summary: "email", plan: [{ tool: "send_email", args: { to: "bo@customer.example", subject: "s", body: "b" } }] });
    expect(approval.status).toBe(201);
    const decided = await person("reviewer", "POST", `/api/dashboard/pivots/${approval.json.pivot.id}/approve`, { planHash: approval.json.pivot.planHash });
    expect(decided.status, JSON.stringify(decided.json)).toBe(200);
    const email = await agent(token.secret, "POST", `/api/v1/runs/${runId}/calls`, { tool: "send_email", args: { to: "bo@customer.example", subject: "s", body: "b" }, cursor: 0, audience: ["internal"] });
    expect(email.json.answer, JSON.stringify(email.json)).toBe("call");
    const step = await (await getPrisma()).step.findUniqueOrThrow({ where: { id: email.json.step.id } });
    expect(step.audience).toEqual(["customer", "internal"]);
    expect((step.correction as { audience: string[] } | null)?.audience).toEqual(["customer", "internal"]);

    // charge_card's rule reads the receipt flag. Without it the table states nothing (customer-facing),
    // and an agent saying "finance" cannot narrow that; with receipt: false the table itself says finance.
    const chargeRun = await startRun(token.secret, "a charge, before any pivot");
    const charge = (orderId: string, args: Record<string, unknown>, cursor: number) =>
      agent(token.secret, "POST", `/api/v1/runs/${chargeRun}/calls`, { tool: "charge_card", args: { customerId: "cus_1", amount: 700, currency: "eur", reason: orderId, ...args }, cursor, compensation: { tool: "refund_charge", args: { amount: 700 } }, audience: ["finance"] });
    const silent = await charge("o-1", {}, 0);
    expect(silent.json.answer, JSON.stringify(silent.json)).toBe("call");
    expect((await (await getPrisma()).step.findUniqueOrThrow({ where: { id: silent.json.step.id } })).audience).toEqual([]);
    expect((await agent(token.secret, "POST", `/api/v1/steps/${silent.json.step.id}/outcome`, { outcome: "confirmed", externalRef: "pi_1", result: {}, attempts: 1 })).status).toBe(200);
    const stated = await charge("o-2", { receipt: false }, 1);
    expect((await (await getPrisma()).step.findUniqueOrThrow({ where: { id: stated.json.step.id } })).audience).toEqual(["finance"]);

    // A correction the agent drafts for the email reaches at least who saw it, ranked by that audience.
    const drafted = await agent(token.secret, "POST", `/api/v1/runs/${runId}/corrections`, {
      correction: { stepId: email.json.step.id, audience: ["internal"], rank: 0, subject: "About our email", body: "Please disregard it." },
      event: { type: "correction.drafted" },
    });
    expect(drafted.status, JSON.stringify(drafted.json)).toBe(201);
    expect(drafted.json.correction).toMatchObject({ audience: ["customer", "internal"], rank: 2 });
  });
});
