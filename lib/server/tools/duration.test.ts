import { describe, expect, it } from "vitest";
import { durationDraftOf, secondsOfDraft } from "./duration";

describe("durations in the units people use", () => {
  it("shows a stored value whole and saves it back unchanged", () => {
    for (const seconds of [60, 90, 3_600, 5_400, 86_400, 7 * 86_400, 0, 1]) expect(secondsOfDraft(durationDraftOf(seconds))).toBe(seconds);
    expect(durationDraftOf(60)).toEqual({ amount: "1", unit: "minutes" });
    expect(durationDraftOf(7 * 86_400)).toEqual({ amount: "7", unit: "days" });
    expect(durationDraftOf(null)).toEqual({ amount: "", unit: "hours" });
  });

  it("converts what is typed in its unit", () => {
    expect(secondsOfDraft({ amount: "15", unit: "minutes" })).toBe(900);
    expect(secondsOfDraft({ amount: "1.5", unit: "hours" })).toBe(5_400);
    expect(secondsOfDraft({ amount: " ", unit: "days" })).toBeNull();
  });
});
