import { describe, expect, it } from "vitest";
import { actorInWords, eventInWords, scopeInWords, typeInWords, valueInWords } from "./event-words";

describe("event words", () => {
  it("say who acted", () => {
    expect(actorInWords("user:ada@example.com")).toEqual({ kind: "person", name: "ada@example.com" });
    expect(actorInWords("agent:support-agent")).toEqual({ kind: "agent", name: "support-agent" });
    expect(actorInWords("system:worker")).toEqual({ kind: "Sagaboard", name: "worker" });
    expect(actorInWords("mallory")).toEqual({ kind: "", name: "mallory" });
  });

  it("name known and unknown event types and chains", () => {
    expect(typeInWords("step.confirmed")).toBe("Step confirmed");
    expect(typeInWords("revoke.pulled_late")).toBe("Revoke: pulled late");
    expect(scopeInWords("agent-token:tok_1")).toBe("agent token tok_1");
    expect(scopeInWords("run:run_1")).toBe("run run_1");
  });

  it("tell the data as a sentence and labelled values, never as JSON", () => {
    const words = eventInWords({ type: "step.intended", data: { stepIdx: 2, tool: "charge_card", stepKey: "ab".repeat(16), phase: "STAGING", via: "api" } });
    expect(words).toEqual({
      title: "Step about to call a tool",
      sentence: "Step #2 will call charge_card (staging phase).",
      facts: [
        { label: "step key", value: "ab".repeat(16) },
        { label: "via", value: "api" },
      ],
    });
    const nested = eventInWords({ type: "compensation.failed", data: { code: "E", detail: { retry: false, refs: ["a", "b"] }, hash: "f".repeat(64) } });
    expect(nested.facts).toEqual([
      { label: "code", value: "E" },
      { label: "detail", value: "retry no; refs a, b" },
      { label: "hash", value: `${"f".repeat(16)}…` },
    ]);
    for (const fact of nested.facts) expect(fact.value).not.toMatch(/[{}"]/);
    expect(valueInWords({ a: { b: { c: 1 } } })).toBe("a b 1 field");
  });
});
