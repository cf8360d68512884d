/**
 * A worker token may do what its claimed tasks need, nothing more: without a live claim on a task of
 * a run it can neither read nor write that run; it never starts runs, proposes pivots or asks for
 * unwinds; with the claim it settles the run's steps, and once the lease is gone it is refused again.
 */
import { describe, expect, it } from "vitest";
import * as runRoute from "@/app/api/v1/runs/[runId]/route";
import * as escalationsRoute from "@/app/api/v1/runs/[runId]/escalations/route";
import * as escalationByIdRoute from "@/app/api/v1/escalations/[escalationId]/route";
import * as escalationLookupRoute from "@/app/api/v1/escalations/route";
import * as pivotsRoute from "@/app/api/v1/runs/[runId]/pivots/route";
import * as callsRoute from "@/app/api/v1/runs/[runId]/calls/route";
import * as unwindRoute from "@/app/api/v1/runs/[runId]/unwind/route";
import * as runsRoute from "@/app/api/v1/runs/route";
import * as claimRoute from "@/app/api/v1/worker/claim/route";
import { createAgentToken } from "@/lib/server/tokens/create-agent-token";
import { call, makeToken, useTestDatabase } from "./api-test-kit";

const getPrisma = useTestDatabase("worker-scope");

function draft(cursor: number) {
  return { tool: "create_ticket_draft", args: { summary: "draft", orderId: "2001" }, cursor, compensation: { tool: "delete_ticket_draft", args: {} } };
}

describe("worker tokens", () => {
  it("act only on runs of the tasks they hold, and never start runs, propose pivots or ask for unwinds", async () => {
    const prisma = await getPrisma();
    const agent = await makeToken(["create_ticket_draft"], `agent-ws-${Date.now()}`);
    const runId = (await call(runsRoute.POST, "/api/v1/runs", { secret: agent.secret, body: { title: "agent's run" } })).json.run.id as string;
    expect((await call(callsRoute.POST, `/api/v1/runs/${runId}/calls`, { secret: agent.secret, body: draft(0), params: { runId } })).json.answer).toBe("call");
    const { secret: worker } = await createAgentToken(prisma, { name: `worker-ws-${Date.now()}`, tools: ["create_ticket_draft"], role: "worker", createdBy: "test" });
    const before = { steps: await prisma.step.count(), pivots: await prisma.pivot.count(), escalations: await prisma.escalation.count(), runs: await prisma.run.count() };

    const refused = await Promise.all([
      call(runRoute.GET, `/api/v1/runs/${runId}`, { secret: worker, params: { runId } }),
      call(callsRoute.POST, `/api/v1/runs/${runId}/calls`, { secret: worker, body: draft(1), params: { runId } }),
      call(pivotsRoute.POST, `/api/v1/runs/${runId}/pivots`, { secret: worker, body: { summary: "x", plan: [{ tool: "create_ticket_draft", args: {} }] }, params: { runId } }),
      call(escalationsRoute.POST, `/api/v1/runs/${runId}/escalations`, { secret: worker, body: { escalation: { stepId: null, kind: "OUTCOME_UNKNOWN", title: "x", detail: {}, owner: null, dedupeKey: `x:${runId}` }, event: { type: "escalation.raised" } }, params: { runId } }),
      call(unwindRoute.POST, `/api/v1/runs/${runId}/unwind`, { secret: worker, body: { reason: "x" }, params: { runId } }),
      call(runsRoute.POST, "/api/v1/runs", { secret: worker, body: { title: "a worker's own run" } }),
    ]);
    expect(refused.map((r) => r.status)).toEqual([403, 403, 403, 403, 403, 403]);
    expect(refused.every((r) => typeof r.json.error.message === "string" && /worker/.test(r.json.error.message))).toBe(true);
    expect({ steps: await prisma.step.count(), pivots: await prisma.pivot.count(), escalations: await prisma.escalation.count(), runs: await prisma.run.count() }).toEqual(before);

    // The agent's own escalation is not there for the worker: neither by its key nor by its id.
    const raised = await call(escalationsRoute.POST, `/api/v1/runs/${runId}/escalations`, { secret: agent.secret, body: { escalation: { stepId: null, kind: "OUTCOME_UNKNOWN", title: "x", detail: {}, owner: null, dedupeKey: `mine:${runId}` }, event: { type: "escalation.raised" } }, params: { runId } });
    expect(raised.status).toBeLessThan(300);
    const escalationId = raised.json.escalation.id as string;
    expect((await call(escalationLookupRoute.GET, `/api/v1/escalations?dedupeKey=${encodeURIComponent(`mine:${runId}`)}`, { secret: worker })).json).toEqual({ escalation: null });
    expect((await call(escalationByIdRoute.GET, `/api/v1/escalations/${escalationId}`, { secret: worker, params: { escalationId } })).status).toBe(404);

    // The agent asks for an unwind; the worker claims it and may now read the run.
    expect((await call(unwindRoute.POST, `/api/v1/runs/${runId}/unwind`, { secret: agent.secret, body: { reason: "undo it" }, params: { runId } })).status).toBeLessThan(300);
    const claimed = await call(claimRoute.POST, "/api/v1/worker/claim", { secret: worker, body: { workerId: "w1", max: 1, leaseMs: 300 } });
    expect(claimed.json.tasks).toHaveLength(1);
    expect((await call(runRoute.GET, `/api/v1/runs/${runId}`, { secret: worker, params: { runId } })).status).toBe(200);
    expect((await call(escalationByIdRoute.GET, `/api/v1/escalations/${escalationId}`, { secret: worker, params: { escalationId } })).status).toBe(200);
    // Its lease lapses: refused again.
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect((await call(runRoute.GET, `/api/v1/runs/${runId}`, { secret: worker, params: { runId } })).status).toBe(403);
  });

  it("a task whose payload does not fit its kind is failed for good at the claim, never handed out", async () => {
    const prisma = await getPrisma();
    const agent = await makeToken(["create_ticket_draft"]);
    const runId = (await call(runsRoute.POST, "/api/v1/runs", { secret: agent.secret, body: { title: "unfit payload" } })).json.run.id as string;
    const { secret: worker } = await createAgentToken(prisma, { name: `worker-unfit-${Date.now()}`, tools: ["create_ticket_draft"], role: "worker", createdBy: "test" });
    const task = await prisma.workerTask.create({
      data: { id: `wtk_unfit_${Date.now()}`, kind: "COMMIT_PLAN", runId, tools: ["create_ticket_draft"], payload: { reason: "no pivot named" }, dedupeKey: `unfit:${runId}`, status: "PENDING", attempt: 0 },
    });
    const claimed = await call(claimRoute.POST, "/api/v1/worker/claim", { secret: worker, body: { workerId: "w-unfit", max: 4, leaseMs: 30000 } });
    expect(claimed.status).toBe(200);
    expect((claimed.json.tasks as { id: string }[]).map((t) => t.id)).not.toContain(task.id);
    const after = await prisma.workerTask.findUniqueOrThrow({ where: { id: task.id } });
    expect(after.status).toBe("FAILED");
    expect(JSON.stringify(after.error)).toContain("INVALID_PAYLOAD");
  });
});
