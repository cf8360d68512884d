import { describe, expect, it } from "vitest";
import type { SlaRule } from "@/generated/prisma";
import { escalationSla, pivotSla, slaPoints, ZSlaRuleInput } from "./sla-rules";

const rule = (target: string, slaSec: number, expireSec: number | null = null, backupTeam: string | null = null): [string, SlaRule] => [
  target,
  { target, slaSec, reminderAt: 0.5, backupTeam, expireSec, updatedBy: "admin", updatedAt: new Date(0) },
];

describe("SLA rules", () => {
  it("takes a tool's rule over its kind's, and the kind's over the default", () => {
    const rules = new Map([rule("kind:APPROVAL_REQUIRED", 600, 1200), rule("tool:send_email", 60, 120, "on-call")]);
    expect(escalationSla(rules, "APPROVAL_REQUIRED", "send_email")).toMatchObject({ source: "tool:send_email", slaSec: 60, expireSec: 120, backupTeam: "on-call" });
    expect(escalationSla(rules, "APPROVAL_REQUIRED", "charge_card")).toMatchObject({ source: "kind:APPROVAL_REQUIRED", slaSec: 600 });
    expect(escalationSla(new Map(), "OUTCOME_UNKNOWN", null)).toMatchObject({ source: "default:kind:OUTCOME_UNKNOWN", slaSec: 7200, expireSec: null });
  });

  it("never expires what has no safe default action: only pivots and held calls are rejected at expiry", () => {
    const rules = new Map([rule("kind:COMPENSATION_FAILED", 60, 120)]);
    expect(escalationSla(rules, "COMPENSATION_FAILED", null).expireSec).toBeNull();
  });

  it("gives a pivot the strictest rule of the tools in its plan, and its own deadline can bring the expiry forward", () => {
    const rules = new Map([rule("pivot", 3600, 7200), rule("tool:send_email", 600)]);
    expect(pivotSla(rules, ["charge_card"])).toMatchObject({ source: "pivot", slaSec: 3600 });
    expect(pivotSla(rules, ["charge_card", "send_email"])).toMatchObject({ source: "tool:send_email", slaSec: 600, expireSec: 7200 });
    const created = new Date("2026-12-01T10:00:00Z");
    const points = slaPoints(pivotSla(rules, []), created, new Date("2026-12-01T11:00:00Z"));
    expect(points).toEqual({ reminderAt: new Date("2026-12-01T10:30:00Z"), breachAt: new Date("2026-12-01T11:00:00Z"), expireAt: new Date("2026-12-01T11:00:00Z") });
  });

  it("refuses a rule that would reject before anyone was told, and a kind that does not exist, naming the field", () => {
    const bad = ZSlaRuleInput.safeParse({ target: "pivot", slaSec: 600, reminderAt: 0.5, backupTeam: null, expireSec: 60 });
    expect(bad.success ? [] : bad.error.issues.map((i) => i.path.join("."))).toEqual(["expireSec"]);
    const kind = ZSlaRuleInput.safeParse({ target: "kind:NOPE", slaSec: 600, reminderAt: 0.5, backupTeam: null, expireSec: null });
    expect(kind.success ? "" : kind.error.issues[0]!.message).toContain("the kind must be one of");
  });
});
