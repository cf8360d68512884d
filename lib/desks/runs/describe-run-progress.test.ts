import { describe, expect, it } from "vitest";
import { describeRunProgress, type RunProgressInput } from "./describe-run-progress";

const t = (s: number) => new Date(Date.UTC(2026, 11, 1, 10, 0, s));
const plan = [{ tool: "capture_payment" }, { tool: "send_email" }];

function input(over: Partial<RunProgressInput> = {}): RunProgressInput {
  return {
    run: { status: "COMMITTING", agent: "support-agent" },
    steps: [
      { stepIdx: 0, tool: "authorize_payment", status: "CONFIRMED", approvalId: null, planItemIdx: null },
      { stepIdx: 1, tool: "capture_payment", status: "CONFIRMED", approvalId: "pvt_1", planItemIdx: 0 },
    ],
    pivots: [{ id: "pvt_1", status: "APPROVED", plan }],
    escalations: [],
    corrections: [],
    auditEvents: [
      { seq: 1, type: "step.confirmed", actor: "agent:support-agent", at: t(1), stepId: "stp_0" },
      { seq: 2, type: "pivot.approved", actor: "user:rita@example.com", at: t(2), stepId: null },
      { seq: 3, type: "step.confirmed", actor: "agent:support-agent", at: t(3), stepId: "stp_1" },
      { seq: 4, type: "task.claimed", actor: "system:worker-1", at: t(4), stepId: null },
    ],
    stepIdxById: new Map([["stp_0", 0], ["stp_1", 1]]),
    now: t(30),
    stuckAfterMs: 60_000,
    ...over,
  };
}

describe("describeRunProgress", () => {
  it("names the agent's last write and the next approved call, and when the silence is raised", () => {
    expect(describeRunProgress(input())).toEqual({
      lastContact: { at: t(3).toISOString(), type: "step.confirmed", stepIdx: 1 },
      expected: "The agent is expected to call send_email next (approved call 2 of 2), and then complete the run.",
      waitingOn: "agent",
      stuckAt: new Date(t(3).getTime() + 60_000).toISOString(),
      stuckEscalationId: null,
      checkedAt: t(30).toISOString(),
      approvedNotMade: [],
    });
  });

  it("says an approved held call the agent never made went nowhere, until a step makes it", () => {
    const held = { id: "esc_9", kind: "APPROVAL_REQUIRED", status: "RESOLVED", stepId: null, createdAt: t(5), detail: { tool: "send_email", argsHash: "h1" }, resolution: { approved: true }, resolvedAt: t(6), resolvedBy: "rita@example.com" };
    const staging = { run: { status: "RUNNING", agent: "support-agent" }, pivots: [], escalations: [held] };
    const waiting = describeRunProgress(input(staging));
    expect(waiting.approvedNotMade).toEqual([{ escalationId: "esc_9", tool: "send_email", approvedAt: t(6).toISOString(), approvedBy: "rita@example.com" }]);
    expect(waiting.expected).toMatch(/approved the held call send_email, but the agent has not made it yet: nothing has gone out/);
    const made = describeRunProgress(input({ ...staging, steps: [...input().steps, { stepIdx: 2, tool: "send_email", status: "CONFIRMED", approvalId: "esc_9", planItemIdx: null, argsHash: "h1", createdAt: t(7) }] }));
    expect(made.approvedNotMade).toEqual([]);
    const rejected = describeRunProgress(input({ ...staging, escalations: [{ ...held, resolution: { approved: false } }] }));
    expect(rejected.approvedNotMade).toEqual([]);
  });

  it("measures from the approval when the agent has not written since, and says when every call is made", () => {
    const p = describeRunProgress(input({ steps: [], auditEvents: [{ seq: 1, type: "pivot.approved", actor: "user:rita@example.com", at: t(2), stepId: null }] }));
    expect(p.lastContact).toBeNull();
    expect(p.expected).toBe("The agent is expected to call capture_payment next (approved call 1 of 2), then 1 more approved call, and then complete the run.");
    expect(p.stuckAt).toBe(new Date(t(2).getTime() + 60_000).toISOString());
    const done = describeRunProgress(input({ steps: [...input().steps, { stepIdx: 2, tool: "send_email", status: "CONFIRMED", approvalId: "pvt_1", planItemIdx: 1 }] }));
    expect(done.expected).toBe("Every approved call has been made: the agent is expected to mark the run complete.");
  });

  it("says a person is needed while an item is open, and stops counting once the silence was raised and settled", () => {
    const open = describeRunProgress(input({ escalations: [{ id: "esc_1", kind: "STUCK_AFTER_PIVOT", status: "OPEN", stepId: null, createdAt: t(70) }] }));
    expect(open).toMatchObject({ waitingOn: "person", stuckAt: null, stuckEscalationId: "esc_1" });
    expect(open.expected).toMatch(/^It waits for a person: 1 open escalation/);
    const settled = describeRunProgress(input({ escalations: [{ id: "esc_1", kind: "STUCK_AFTER_PIVOT", status: "RESOLVED", stepId: null, createdAt: t(70) }] }));
    expect(settled).toMatchObject({ waitingOn: "agent", stuckAt: null, stuckEscalationId: null });
  });

  it("says who acts in every other state", () => {
    expect(describeRunProgress(input({ run: { status: "AWAITING_PIVOT", agent: "support-agent" } })).waitingOn).toBe("person");
    expect(describeRunProgress(input({ run: { status: "UNWINDING", agent: "support-agent" } })).expected).toMatch(/worker is undoing/);
    const drafts = describeRunProgress(input({ run: { status: "NEEDS_ATTENTION", agent: "support-agent" }, corrections: [{ status: "DRAFT" }, { status: "SENT" }] }));
    expect(drafts.expected).toBe("It waits for people: support must send or dismiss 1 correction draft.");
    const done = describeRunProgress(input({ run: { status: "COMPLETED", agent: "support-agent" } }));
    expect(done).toMatchObject({ waitingOn: "nobody", stuckAt: null });
  });

  it("a run whose agent's token was revoked waits for a person, naming the step left in flight", () => {
    const running = input({
      run: { status: "RUNNING", agent: "support-agent" },
      steps: [
        { stepIdx: 0, tool: "create_ticket", status: "CONFIRMED", approvalId: null, planItemIdx: null },
        { stepIdx: 1, tool: "charge_card", status: "INTENDED", approvalId: null, planItemIdx: null },
      ],
      pivots: [],
      agentToken: { revoked: true },
    });
    const progress = describeRunProgress(running);
    expect(progress.waitingOn).toBe("person");
    expect(progress.expected).toBe(
      "The agent's token was revoked, so the agent cannot go on; nobody knows yet whether step 2 (charge_card) happened, and pulling back checks that first. Pull back the whole run to undo what it did, or give the agent a new token for a new run.",
    );
    expect(describeRunProgress({ ...running, agentToken: { revoked: false } }).waitingOn).toBe("agent");
    expect(describeRunProgress({ ...running, run: { status: "UNWOUND", agent: "support-agent" } }).waitingOn).toBe("nobody");
  });
});
