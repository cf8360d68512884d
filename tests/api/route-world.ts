/**
 * The world the authorization grid and the bad-input corpus call every route in: agent A's runs (one
 * open, with a step, a pending pivot and an escalation; one unwound, with a correction and an unwind
 * task), agent B, a worker token, a revoked token, one person per role, and a snapshot of every table
 * so a refused write can be shown to have changed nothing.
 */
import { createHash } from "node:crypto";
import { expect } from "vitest";
import { runWithSessionReader } from "@/lib/server/auth/current-user";
import type { Role } from "@/lib/server/auth/roles";
import type { PrismaClient } from "@/lib/core/db/prisma";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { sharedSagaStore } from "@/lib/core/db/prisma-saga-store";
import { syncToolPolicies } from "@/lib/server/tools/sync-tool-policies";
import { resetHostedWorld } from "@/lib/demo/sim/host";
import { createAgentToken } from "@/lib/server/tokens/create-agent-token";
import { revokeAgentToken } from "@/lib/server/tokens/revoke-agent-token";
import { createUser } from "@/lib/server/users/create-user";
import { routeFetch } from "../support/api-router";
import { ReviewerEngine } from "@/packages/client/src/saga/reviewer-engine";

/** Who calls. */
export const PRINCIPALS = ["anonymous", "revoked", "agentB", "worker", "viewer", "support", "reviewer", "admin", "agentA"] as const;
/** One of PRINCIPALS. */
export type Principal = (typeof PRINCIPALS)[number];

/** The seeded rows and credentials. */
export interface RouteWorld {
  /** Bearer secrets by principal. */
  secrets: Record<"agentA" | "agentB" | "worker" | "revoked", string>;
  /** User ids by role. */
  users: Record<Role, string>;
  /** Agent A's token name. */
  agentAName: string;
  /** Path parameter values: real rows. */
  ids: { runId: string; stepId: string; pivotId: string; escalationId: string; correctionId: string; taskId: string; name: string; unwoundRunId: string };
  /** A spare person and token the admin routes may change. */
  spare: { email: string; tokenName: string };
}

const TOOLS = ["create_ticket_draft", "create_email_draft", "send_email", "charge_card", "search_orders"];

export async function seedRouteWorld(prisma: PrismaClient, label: string): Promise<RouteWorld> {
  const world = resetHostedWorld({ searchLagMs: 0 });
  await syncToolPolicies(prisma, createSupportToolRegistry(world), "system:test");
  const token = async (name: string, role: "agent" | "worker" = "agent") => (await createAgentToken(prisma, { name, tools: TOOLS, role, createdBy: "admin@example.com" })).secret;
  const agentAName = `${label}-agent-a`;
  const secrets = {
    agentA: await token(agentAName),
    agentB: await token(`${label}-agent-b`),
    worker: await token(`${label}-worker`, "worker"),
    revoked: await token(`${label}-revoked`),
  };
  await revokeAgentToken(prisma, { name: `${label}-revoked`, revokedBy: "admin@example.com" });
  await token(`${label}-spare`);
  const users = {} as Record<Role, string>;
  for (const role of ["viewer", "support", "reviewer", "admin"] as const) {
    users[role] = (await createUser(prisma, { email: `${role}-${label}@example.com`, name: `${role} ${label}`, role, password: "correct horse battery", by: { type: "system", id: "test" } })).id;
  }
  const spareEmail = `spare-${label}@example.com`;
  await createUser(prisma, { email: spareEmail, name: "spare", role: "viewer", password: "correct horse battery", by: { type: "system", id: "test" } });

  const engine = new ReviewerEngine({ store: sharedSagaStore(prisma), registry: createSupportToolRegistry(world), recheckAfterMs: 20 });
  // The open run: a step done, a pivot waiting, an escalation raised.
  const open = await engine.startRun({ title: "grid: open run", agent: agentAName });
  expect((await open.call("create_ticket_draft", { summary: "late parcel", orderId: "A-1001" })).status).toBe("ok");
  const pivot = await open.requestPivot({ summary: "email the customer", plan: [{ tool: "send_email", args: { to: "c@example.com", subject: "s", body: "b" } }] });
  const step = await prisma.step.findFirstOrThrow({ where: { runId: open.runId } });
  const raised = await routeFetch(
    new Request(`http://localhost/api/v1/runs/${open.runId}/escalations`, {
      method: "POST",
      headers: { authorization: `Bearer ${secrets.agentA}`, "content-type": "application/json" },
      body: JSON.stringify({
        // Not about a step, so routed to nobody in particular (reviewers): support staff may work only
        // escalations the tool table gives a support team, whatever owner the agent names.
        escalation: { stepId: null, kind: "OUTCOME_UNKNOWN", title: "did it land?", detail: {}, owner: "support-leads", dedupeKey: `step:${step.id}:grid:${open.runId}` },
        event: { type: "escalation.raised" },
      }),
    }),
  );
  expect(raised.status, await raised.clone().text()).toBe(201);
  const escalation = ((await raised.json()) as { escalation: { id: string } }).escalation;

  // The unwound run: an email sent after an approved pivot, then unwound (a correction drafted).
  const sent = await engine.startRun({ title: "grid: unwound run", agent: agentAName });
  const args = { to: "d@example.com", subject: "ships", body: "tomorrow" };
  const approved = await sent.requestPivot({ summary: "email", plan: [{ tool: "send_email", args }] });
  await engine.decidePivot(approved.id, { approve: true, actor: { type: "user", id: "rita@example.com" }, planHash: approved.planHash });
  expect((await sent.call("send_email", args)).status).toBe("ok");
  await engine.unwind(sent.runId, { type: "system", id: "test" }, "cancelled");
  const correction = await prisma.correction.findFirstOrThrow({ where: { runId: sent.runId } });
  // A third run with an unwind task waiting for a worker (the task routes' taskId).
  const toUnwind = await engine.startRun({ title: "grid: run to unwind", agent: agentAName });
  const unwind = await routeFetch(
    new Request(`http://localhost/api/v1/runs/${toUnwind.runId}/unwind`, {
      method: "POST",
      headers: { authorization: `Bearer ${secrets.agentA}`, "content-type": "application/json" },
      body: JSON.stringify({ reason: "grid: a task to settle" }),
    }),
  );
  expect(unwind.status, await unwind.clone().text()).toBe(202);
  const task = ((await unwind.json()) as { task: { id: string } }).task;

  return {
    secrets,
    users,
    agentAName,
    ids: { runId: open.runId, stepId: step.id, pivotId: pivot.id, escalationId: escalation.id, correctionId: correction.id, taskId: task.id, name: "create_ticket_draft", unwoundRunId: sent.runId },
    spare: { email: spareEmail, tokenName: `${label}-spare` },
  };
}

/** A request of a route in the grid or the corpus. */
export interface RouteRequest {
  /** Method. */
  method: string;
  /** Path with query, params already filled. */
  url: string;
  /** Extra headers (Authorization and a same-site Origin are added for the principal). */
  headers?: Record<string, string>;
  /** Raw body (string or bytes), sent as is. */
  body?: string | Uint8Array;
}

/** The response of a request: status and parsed JSON (undefined when not JSON). */
export interface RouteResponse {
  /** HTTP status. */
  status: number;
  /** Parsed JSON body, if it was JSON. */
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests read arbitrary fields
  /** Raw text. */
  text: string;
}

/** Sends `request` as `who`, through the router (as a browser or an agent would reach the route). */
export async function send(world: RouteWorld, who: Principal, request: RouteRequest): Promise<RouteResponse> {
  const headers: Record<string, string> = { ...request.headers };
  if (who === "agentA" || who === "agentB" || who === "worker" || who === "revoked") headers.authorization ??= `Bearer ${world.secrets[who]}`;
  if (request.method !== "GET") headers.origin ??= "http://localhost";
  if (request.body !== undefined) headers["content-type"] ??= "application/json";
  const go = async () => {
    const response = await routeFetch(new Request(`http://localhost${request.url}`, { method: request.method, headers, body: request.body as BodyInit | undefined }));
    const text = await response.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: response.status, json, text };
  };
  const userId = who === "viewer" || who === "support" || who === "reviewer" || who === "admin" ? world.users[who] : null;
  return runWithSessionReader(async () => userId, go);
}

const TABLES = [
  "run",
  "step",
  "pivot",
  "escalation",
  "correction",
  "revoke",
  "auditEvent",
  "agentToken",
  "idempotentRequest",
  "toolPolicy",
  "toolPolicyVersion",
  "compensator",
  "workerTask",
  "user",
  "userSession",
  "ssoGroupRole",
  "scimToken",
  "scimGroup",
  "approvalLink",
  "pivotApproval",
  "slackMessage",
] as const;

/**
 * Every table's row count and a digest of its rows. A token's lastUsedAt is left out: authenticating
 * stamps it (at most once a minute) whatever the request asks, which is not a write the request made.
 * So is a refused attempt on a token's audit chain (`agent_token.refused`): a 403 records the attempt
 * and nothing else, by design (tests/api/refused-attempts.test.ts proves it is written).
 */
export async function snapshotTables(prisma: PrismaClient): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  await Promise.all(
    TABLES.map(async (table) => {
      const all = (await (prisma[table] as unknown as { findMany(): Promise<unknown[]> }).findMany()) as unknown[];
      const rows = table === "auditEvent" ? all.filter((row) => (row as { type?: unknown }).type !== "agent_token.refused") : all;
      // Sorted: PostgreSQL returns rows in no fixed order (an updated row moves).
      const lines = rows.map((row) => JSON.stringify(row, (k, v: unknown) => (k === "lastUsedAt" ? undefined : typeof v === "bigint" ? v.toString() : v))).sort();
      const digest = createHash("sha256").update(lines.join("\n")).digest("hex").slice(0, 16);
      out[table] = `${rows.length}:${digest}`;
    }),
  );
  return out;
}

/** The tables whose rows differ between two snapshots. */
export function changedTables(before: Record<string, string>, after: Record<string, string>): string[] {
  return Object.keys(before).filter((t) => before[t] !== after[t]);
}
