import { describe, expect, it } from "vitest";
import { audienceFromRule, describeAudienceRule, parseAudienceRule, resolveAudience } from "./audience";

const RULE = "customer if to is outside the company's domains, else internal";

describe("audience rules", () => {
  it("a recipient rule compares the named argument's address with the company's domains", () => {
    expect(parseAudienceRule(RULE)).toEqual({ kind: "recipient", arg: "to", outside: ["customer"], inside: ["internal"] });
    expect(audienceFromRule(RULE, { to: "jo@example.com" }, ["acme.test"])).toEqual(["customer"]);
    expect(audienceFromRule(RULE, { to: "ops@eu.acme.test" }, ["acme.test"])).toEqual(["internal"]);
    expect(audienceFromRule(RULE, { to: ["ops@acme.test", "jo@example.com"] }, ["acme.test"])).toEqual(["customer"]);
    expect(audienceFromRule(RULE, {}, ["acme.test"])).toEqual([]);
  });

  it("a list is the same audience for every call, and the rule reads in words", () => {
    expect(audienceFromRule("Finance, support_team", { to: "x@y.z" })).toEqual(["finance", "support_team"]);
    expect(describeAudienceRule(RULE, ["acme.test"])).toBe("customer when the `to` argument is outside the company's domains (acme.test), else internal");
  });

  it("nothing stated is unknown and counts as customer-facing, never as nobody", () => {
    expect(resolveAudience([], null, { to: "x@y.z" })).toMatchObject({ audience: ["unknown"], source: "unknown", rank: 2 });
    expect(resolveAudience([], "finance", {})).toMatchObject({ audience: ["finance"], source: "tool_table", rank: 0 });
    expect(resolveAudience(["partner"], RULE, { to: "x@y.z" })).toMatchObject({ audience: ["partner"], source: "recorded", rank: 1 });
  });
});
