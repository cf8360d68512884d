import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { argsHash, auditHash, canonicalJson, compensationKey, KEY_LENGTH, planHash, stepKey } from "./keys";

/** sha256 hex, computed here independently of keys.ts. */
function sha256(input: string): string {
  return createHash("sha256").update(input).digest("hex");
}

const HEX32 = /^[0-9a-f]{32}$/;

describe("stepKey", () => {
  it("is 32 lower-case hex characters", () => {
    const key = stepKey("run_1", 0, "create_ticket");
    expect(KEY_LENGTH).toBe(32);
    expect(key).toMatch(HEX32);
    expect(key).toHaveLength(32);
  });

  it("is the first 32 hex chars of sha256(`${runId}:${stepIdx}:${tool}`)", () => {
    expect(stepKey("run_1", 0, "create_ticket")).toBe(sha256("run_1:0:create_ticket").slice(0, 32));
    expect(stepKey("run_abc", 17, "charge_card")).toBe(sha256("run_abc:17:charge_card").slice(0, 32));
  });

  it("is deterministic (a reworded retry of the same step lands on the same key)", () => {
    expect(stepKey("run_1", 3, "send_email")).toBe(stepKey("run_1", 3, "send_email"));
  });

  it("differs by step index, by tool and by run", () => {
    const base = stepKey("run_1", 0, "create_ticket");
    expect(stepKey("run_1", 1, "create_ticket")).not.toBe(base);
    expect(stepKey("run_1", 0, "charge_card")).not.toBe(base);
    expect(stepKey("run_2", 0, "create_ticket")).not.toBe(base);
  });
});

describe("compensationKey", () => {
  it("is sha256(`${runId}:${stepIdx}:compensate:${tool}`) truncated to 32 hex chars", () => {
    const key = compensationKey("run_1", 2, "charge_card");
    expect(key).toMatch(HEX32);
    expect(key).toBe(sha256("run_1:2:compensate:charge_card").slice(0, 32));
  });

  it("is not the step key, and differs by index, tool and run", () => {
    const base = compensationKey("run_1", 2, "charge_card");
    expect(base).not.toBe(stepKey("run_1", 2, "charge_card"));
    expect(compensationKey("run_1", 3, "charge_card")).not.toBe(base);
    expect(compensationKey("run_1", 2, "create_ticket")).not.toBe(base);
    expect(compensationKey("run_2", 2, "charge_card")).not.toBe(base);
  });
});

describe("argsHash", () => {
  it("is insensitive to the order of object keys, at every depth", () => {
    const a = { amount: 10, customer: { id: "c1", email: "a@example.com" }, tags: ["x", "y"] };
    const b = { tags: ["x", "y"], customer: { email: "a@example.com", id: "c1" }, amount: 10 };
    expect(argsHash(a)).toBe(argsHash(b));
    expect(argsHash(a)).toBe(sha256(canonicalJson(a)));
    expect(argsHash(a)).toMatch(/^[0-9a-f]{64}$/);
  });

  it("changes when a value changes, and keeps array order significant", () => {
    const a = { amount: 10, tags: ["x", "y"] };
    expect(argsHash({ ...a, amount: 11 })).not.toBe(argsHash(a));
    expect(argsHash({ ...a, tags: ["y", "x"] })).not.toBe(argsHash(a));
  });

  it("hashes undefined like null", () => {
    expect(argsHash(undefined)).toBe(argsHash(null));
  });
});

describe("planHash", () => {
  const items = [
    { tool: "charge_card", argsHash: argsHash({ amount: 10 }), policyVersion: 1 },
    { tool: "send_email", argsHash: argsHash({ to: "a@example.com" }), policyVersion: 1 },
  ];

  it("is stable for equal plans", () => {
    expect(planHash(items)).toBe(planHash(items.map((i) => ({ ...i }))));
  });

  it("changes when a tool's policy version changes", () => {
    const bumped = [items[0]!, { ...items[1]!, policyVersion: 2 }];
    expect(planHash(bumped)).not.toBe(planHash(items));
  });

  it("changes with the args hash, the tool and the order of items", () => {
    expect(planHash([{ ...items[0]!, argsHash: argsHash({ amount: 11 }) }, items[1]!])).not.toBe(planHash(items));
    expect(planHash([{ ...items[0]!, tool: "hold_funds" }, items[1]!])).not.toBe(planHash(items));
    expect(planHash([items[1]!, items[0]!])).not.toBe(planHash(items));
  });
});

describe("auditHash", () => {
  it("is sha256(prevHash + newline + canonical event), insensitive to key order", () => {
    const prev = "0".repeat(64);
    expect(auditHash(prev, { b: 1, a: 2 })).toBe(sha256(`${prev}\n{"a":2,"b":1}`));
    expect(auditHash(prev, { b: 1, a: 2 })).toBe(auditHash(prev, { a: 2, b: 1 }));
    expect(auditHash("1".repeat(64), { a: 2, b: 1 })).not.toBe(auditHash(prev, { a: 2, b: 1 }));
  });
});
