/**
 * "Check the real system" for a tool whose connector lives with a worker, not the web server (the
 * shape of a real deployment: the team's credentials never reach Sagaboard's server). The reviewer
 * asks; the page says a worker was asked and that none has picked it up; the team's worker claims
 * the LOOKUP task over the API, looks the key up with its own connector, and the page shows what it
 * found and who looked, without a reload. Nothing in the saga log changes until the person decides.
 */
import { HttpSagaStore } from "@/packages/client/src/agent/client/http-store";
import { HttpTaskQueue } from "@/packages/client/src/agent/client/http-task-queue";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { settleToolProposal } from "@/lib/server/tools/settle-tool-proposal";
import { syncToolPolicies } from "@/lib/server/tools/sync-tool-policies";
import { ToolOutcomeUnknown } from "@/packages/client/src/saga/errors";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import type { WorldLike } from "@/lib/demo/sim/remote";
import { createAgentToken } from "@/lib/server/tokens/create-agent-token";
import { Worker } from "@/packages/client/src/agent/worker";
import { TEAM_MANIFEST, teamRegistry } from "../support/team-connector";
import { effects, expect, test, uniqueTag, AGENT_STORE } from "./agent";
import { screenshotPath, signIn } from "./fixtures";

test("a lookup for a tool only a worker holds is asked of that worker, and its answer shows on the page", async ({ page, db, world, baseURL, seedUser }) => {
  const ns = `rooms-${uniqueTag()}`;
  const tool = `${ns}.open_case`;
  await syncToolPolicies(db, createSupportToolRegistry(world), "system:e2e"); // a token names a tool the table has
  const { secret } = await createAgentToken(db, { name: ns, tools: ["search_orders"], createdBy: "system:e2e" });
  const declared = await fetch(`${baseURL}/api/v1/tools/declarations`, { method: "POST", headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" }, body: JSON.stringify(TEAM_MANIFEST) });
  expect(declared.status).toBe(200);
  // Accepted by an admin (admin-tools.spec does it through the screen): the declaration was only a
  // proposal beside a row at its strictest; accepting it makes it the row. The row names its system.
  const declaredRow = await db.toolPolicy.findUniqueOrThrow({ where: { name: tool } });
  await settleToolProposal(db, { name: tool, expectedVersion: declaredRow.policyVersion, decision: "accept", reason: "checked against the team's connector" }, { type: "user", id: "admin@e2e" });
  await db.toolPolicy.update({ where: { name: tool }, data: { status: "REVIEWED", system: "rooms desk" } });

  // The case is opened, the answer is lost, and the team's search is down: a person must decide.
  const store = new HttpSagaStore({ baseUrl: baseURL ?? "", token: secret, ...AGENT_STORE });
  const searchDown: WorldLike = { ...world, ticketing: { ...world.ticketing, searchByLabel: () => Promise.reject(new Error("case search is down (503)")) } };
  const engine = new SagaEngine({ store, registry: teamRegistry(searchDown, ns), recheckAfterMs: 500, backoffMs: 50 });
  const run = await engine.startRun({ title: `Open a case for ${ns}`, agent: ns });
  await world.faults.inject("ticketing.create", { kind: "timeout_after_effect" });
  await expect(run.call(tool, { summary: "Room double-booked", orderId: "3001" })).rejects.toBeInstanceOf(ToolOutcomeUnknown);
  // The retry must reconcile first, and cannot: the lookup is down, so an escalation asks a person.
  await expect(run.call(tool, { summary: "Room double-booked", orderId: "3001" })).rejects.toBeInstanceOf(ToolOutcomeUnknown);
  const step = await db.step.findFirstOrThrow({ where: { runId: run.runId } });
  const escalation = await db.escalation.findFirstOrThrow({ where: { runId: run.runId, kind: "OUTCOME_UNKNOWN" } });
  const [created] = await effects(world, { op: "ticketing.create", key: step.stepKey });
  if (!created?.ref) throw new Error("the case was opened in the real system despite the timeout");

  const reviewer = await seedUser("reviewer");
  await signIn(page, reviewer, `/escalations/${escalation.id}`);
  await page.getByRole("button", { name: "Claim" }).click();
  await expect(page.getByText(/Looks step key .* up in Rooms desk/)).toBeVisible();
  await page.getByRole("button", { name: "Check the real system" }).click();
  const waiting = page.locator(".check.asked");
  await expect(waiting).toContainText(`No connector for ${tool} runs on this server`);
  await expect(waiting).toContainText("No worker holding it has picked it up yet.");
  await expect(page.getByRole("button", { name: "Waiting for a worker…" })).toBeDisabled();
  await page.screenshot({ path: screenshotPath("escalation-check-waiting-for-worker"), fullPage: true });

  // The team's worker (its search is back) claims the LOOKUP over the API and answers it.
  const worker = await createAgentToken(db, { name: `${ns}-worker`, tools: [tool], role: "worker", createdBy: "system:e2e" });
  const workerEngine = new SagaEngine({ store: new HttpSagaStore({ baseUrl: baseURL ?? "", token: worker.secret, ...AGENT_STORE }), registry: teamRegistry(world, ns), recheckAfterMs: 500, backoffMs: 50 });
  const outcomes = await new Worker({ queue: new HttpTaskQueue({ baseUrl: baseURL ?? "", token: worker.secret }), engine: workerEngine, workerId: `${ns}-worker`, tools: [tool] }).runOnce();
  expect(outcomes.map((o) => o.outcome)).toEqual(["done"]);

  const found = page.locator(".check.found");
  await expect(found).toContainText("Found in Rooms desk: the effect exists.");
  await expect(found).toContainText(created.ref);
  await expect(found).toContainText(`by ${ns}-worker`);
  await expect(page.getByLabel("Evidence (required): what you saw, and where")).toHaveValue(new RegExp(`by ${ns}-worker found ${created.ref}`));
  await page.screenshot({ path: screenshotPath("escalation-check-answered-by-worker"), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: screenshotPath("escalation-check-answered-by-worker-phone"), fullPage: true });

  // Looking changed nothing: the step waits for the person's decision; the world holds one case.
  expect((await db.step.findUniqueOrThrow({ where: { id: step.id } })).status).toBe("UNKNOWN");
  expect(await effects(world, { op: "ticketing.create", key: step.stepKey })).toHaveLength(1);
});
