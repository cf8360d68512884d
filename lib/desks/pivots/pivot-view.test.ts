import { describe, expect, it } from "vitest";
import { FakeSystem, fakeCompensator, fakeTools } from "@/packages/client/src/saga/testkit";
import { ToolRegistry } from "@/packages/client/src/saga/tools";
import { planItemViews } from "./pivot-view";
import type { ToolPolicyFacts } from "@/lib/server/tools/tool-policies";

const sys = new FakeSystem();
const registry = new ToolRegistry(fakeTools(sys), [fakeCompensator(sys, "undo"), fakeCompensator(sys, "refund")]);

function facts(name: string, audienceRule: string | null): ToolPolicyFacts {
  return { name, policyVersion: 1, revocationWindowSec: null, owner: null, compensator: null, system: "email", audienceRule, reviewerEditableArgs: null, source: "tool_table" };
}

describe("who sees a plan item's effect", () => {
  it("an email to a customer is customer-facing by the tool's own rule", () => {
    const [view] = planItemViews([{ tool: "send_email", args: { text: "hi" }, argsHash: "h", policyVersion: 1, toolClass: "IRREVERSIBLE" }], new Map(), registry);
    expect(view).toMatchObject({ audience: ["customer"], audienceRank: 2, audienceSource: "tool", editable: true });
  });

  it("a declared tool the server has no code for is classified by the tool table's audience rule", () => {
    const item = { tool: "team_send_sms", args: { to: "+4912345" }, argsHash: "h", policyVersion: 1, toolClass: "IRREVERSIBLE" as const };
    const [view] = planItemViews([item], new Map([["team_send_sms", facts("team_send_sms", "customer, support")]]), registry);
    expect(view).toMatchObject({ audience: ["customer", "support"], audienceRank: 2, audienceSource: "tool_table", editable: false });
  });

  it("an audience nobody states is treated as customer-facing, never as nobody", () => {
    const item = { tool: "team_post_update", args: {}, argsHash: "h", policyVersion: 1, toolClass: "IRREVERSIBLE" as const };
    const [view] = planItemViews([item], new Map([["team_post_update", facts("team_post_update", null)]]), registry);
    expect(view).toMatchObject({ audience: null, audienceRank: 2, audienceSource: "unknown" });
  });
});
