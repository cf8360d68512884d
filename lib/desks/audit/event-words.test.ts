import { describe, expect, it } from "vitest";
import { actorInWords, codeInWords, eventInWords, factsOf, moneyInWords, scopeInWords, typeInWords, valueInWords } from "./event-words";

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
        { label: "recorded through", value: "the HTTP API" },
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
    expect(valueInWords("x".repeat(500))).toHaveLength(160);
    expect(valueInWords(Array.from({ length: 40 }, (_, i) => `tool_number_${i}`))).toMatch(/^tool_number_0, .*tool_number_\d+ and \d+ more$/);
  });

  it("read a tool table diff as one value per changed field, and a token as a sentence", () => {
    const edited = eventInWords({ type: "tool.edited", data: { tool: "send_email", version: 3, diff: { owner: { from: "a-team", to: "b-team" }, revocationWindowSec: { from: null, to: 7200 } }, reason: "moved" } });
    expect(edited).toEqual({
      title: "Tool row edited",
      sentence: "send_email was edited, now at version 3.",
      facts: [
        { label: "owner", value: "a-team → b-team" },
        { label: "revocation window", value: "2 hours" },
        { label: "reason", value: "moved" },
      ],
    });
    const token = eventInWords({ type: "agent_token.created", data: { name: "support-agent", role: "agent", tools: ["send_email"], prefix: "sgb_1", via: "api" } });
    expect(token.sentence).toBe("A token for agent support-agent, scoped to 1 tool.");
    expect(token.facts).toEqual([
      { label: "tools", value: "send_email" },
      { label: "prefix", value: "sgb_1" },
      { label: "recorded through", value: "the HTTP API" },
    ]);
  });

  it("read amounts as money, never the minor units beside them, and arguments as labelled values", () => {
    expect(moneyInWords(1800, "eur")).toBe("€18.00");
    expect(moneyInWords(1800, "JPY")).toBe("¥1,800");
    expect(moneyInWords(1800)).toBe("18.00");
    expect(factsOf({ customerId: "cus_bo", amount: 1800, currency: "eur" })).toEqual([
      { label: "customer id", value: "cus_bo" },
      { label: "amount", value: "€18.00" },
    ]);
    expect(factsOf("plain", "reason")).toEqual([{ label: "reason", value: "plain" }]);
    expect(factsOf(null)).toEqual([]);
    const captured = eventInWords({ type: "step.intended", data: { stepIdx: 4, tool: "capture_payment", args: { amount: 1800 }, amount: 1800, currency: "eur" } });
    expect(captured.facts.find((f) => f.label === "amount")?.value).toBe("€18.00");
    expect(captured.facts.some((f) => f.label === "currency")).toBe(false);
  });

  it("say in a sentence that an approved run went quiet, and what an approval and a failure mean", () => {
    const stuck = eventInWords({ type: "escalation.raised", data: { kind: "STUCK_AFTER_PIVOT", reason: "no_progress_after_pivot", since: "2026-12-01T10:00:00.000Z", stuckAfterMs: 900000 } });
    expect(stuck.sentence).toBe("A person is needed: the run was approved but its agent has not moved since 2026-12-01T10:00:00.000Z.");
    expect(stuck.facts).toEqual([{ label: "stuck after ms", value: "900000" }]);
    expect(eventInWords({ type: "pivot.approved", data: { pivotId: "pvt_1", planHash: "a".repeat(64), reason: null } }).sentence).toMatch(/approved the plan/);
    expect(eventInWords({ type: "step.failed", data: { stepIdx: 2, reason: "card_declined", message: "declined" } }).sentence).toBe("Step #2 was refused by the real system: declined.");
  });
});

describe("codes and times in recorded data", () => {
  it("read as words: outcomes, revoke kinds and resolutions by their phrase, other status codes spaced, ISO times in UTC; tool names stay", () => {
    expect(factsOf({ outcome: "NOT_EXECUTED", action: "COMPENSATE", revoke: "handled_outside_window", kind: "COMPENSATION_FAILED" })).toEqual([
      { label: "outcome", value: "did not happen" },
      { label: "action", value: "undo by its compensation" },
      { label: "revoke", value: "handled by a person, past the window" },
      { label: "kind", value: "compensation failed" },
    ]);
    expect(codeInWords("2026-12-03T22:28:05.000Z")).toBe("2026-12-03 22:28:05 UTC");
    expect(codeInWords("outcome_unknown")).toBe("nobody knows whether it happened");
    expect(codeInWords("create_ticket_draft")).toBe("create_ticket_draft");
    expect(codeInWords("EUR")).toBe("EUR");
  });
});

describe("an event recorded by the call commands (no step number in its data)", () => {
  it("says which step when the caller knows its number, and 'The step' when it does not", () => {
    const confirmed = { type: "step.confirmed", data: { externalRef: "T-1", via: "api" } };
    expect(eventInWords({ ...confirmed, stepIdx: 2 }).sentence).toMatch(/^Step #2 /);
    expect(eventInWords(confirmed).sentence).toMatch(/^The step /);
    expect(eventInWords({ type: "step.confirmed", data: { stepIdx: 0 }, stepIdx: 5 }).sentence).toMatch(/^Step #0 /); // the data's own number wins
  });

  it("say amounts as money at any depth, in the call's currency when the value names none, and reason codes as sentences", () => {
    const failed = { reason: "not_confirmed", remaining: { paymentIntentId: "pi_1", charged: 700, stillCharged: 700 } };
    expect(factsOf(failed, "error", "eur")).toContainEqual({ label: "remaining", value: "payment intent id pi_1; charged €7.00; still charged €7.00" });
    expect(valueInWords({ refund: { amount: 1800, currency: "usd" } })).toBe("refund amount $18.00");
    expect(factsOf({ reasonCode: "DO_NOT_PROCEED", reason: "IRREVERSIBLE" })).toEqual([
      { label: "the agent was told", value: "Stop: unwind what was staged" },
      { label: "reason", value: "it cannot be taken back and no approved pivot covers it" },
    ]);
  });
});
