/**
 * Escalations are worked by the team the tool table routes them to: support staff claim and resolve
 * what a support team owns, except approving a held call (reviewer-only); reviewers work everything.
 */
import { describe, expect, it } from "vitest";
import * as claimRoute from "@/app/api/dashboard/escalations/[escalationId]/claim/route";
import * as queueRoute from "@/app/api/dashboard/escalations/route";
import { runWithSessionReader } from "@/lib/server/auth/current-user";
import { sharedSagaStore } from "@/lib/core/db/prisma-saga-store";
import { createUser } from "@/lib/server/users/create-user";
import { call, useTestDatabase } from "./api-test-kit";

const getPrisma = useTestDatabase("escalation-routing");

describe("escalation routing", () => {
  it("support works support-owned items but not other teams' nor held-call approvals; a reviewer works all", async () => {
    const prisma = await getPrisma();
    const store = sharedSagaStore(prisma);
    const actor = { type: "system" as const, id: "test" };
    const run = await store.createRun({ id: "run_route1", title: "routing", agent: "a", onBehalfOf: null, metadata: {} }, { type: "run.started", actor, data: {} });
    const raise = async (id: string, kind: "OUTCOME_UNKNOWN" | "APPROVAL_REQUIRED", owner: string) =>
      (await store.createEscalation({ id, runId: run.id, stepId: null, kind, title: id, detail: {}, owner, dedupeKey: `${id}:${run.id}` }, { type: "escalation.raised", actor, data: {} })).escalation.id;
    const ours = await raise("esc_support_unknown", "OUTCOME_UNKNOWN", "support-leads");
    const theirs = await raise("esc_payments_unknown", "OUTCOME_UNKNOWN", "payments-team");
    const approval = await raise("esc_support_approval", "APPROVAL_REQUIRED", "support-leads");
    const support = await createUser(prisma, { email: "sam-routing@example.com", name: "Sam", role: "support", password: "correct horse battery", by: actor });
    const reviewer = await createUser(prisma, { email: "rita-routing@example.com", name: "Rita", role: "reviewer", password: "correct horse battery", by: actor });
    const claim = (userId: string, id: string) =>
      runWithSessionReader(async () => userId, () => call(claimRoute.POST, `/api/dashboard/escalations/${id}/claim`, { method: "POST", headers: { origin: "http://localhost" }, params: { escalationId: id } }));

    expect((await claim(support.id, ours)).json).toMatchObject({ ok: true });
    const refusedOther = await claim(support.id, theirs);
    expect(refusedOther.status).toBe(403);
    expect(refusedOther.json.error.message).toContain("routed to payments-team");
    const refusedApproval = await claim(support.id, approval);
    expect(refusedApproval.status).toBe(403);
    expect(refusedApproval.json.error.message).toContain("approving a held call needs the reviewer role");
    expect(await prisma.escalation.findMany({ where: { id: { in: [theirs, approval] } }, select: { status: true } })).toEqual([{ status: "OPEN" }, { status: "OPEN" }]);
    expect((await claim(reviewer.id, theirs)).json).toMatchObject({ ok: true });

    // The queue says, per item, what this person may work.
    const queue = await runWithSessionReader(async () => support.id, () => call(queueRoute.GET, "/api/dashboard/escalations?view=all"));
    const canWork = Object.fromEntries(queue.json.items.map((i: { id: string; canWork: boolean }) => [i.id, i.canWork]));
    expect(canWork).toMatchObject({ [ours]: true, [theirs]: false, [approval]: false });
  });
});
