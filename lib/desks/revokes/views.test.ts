import { describe, expect, it } from "vitest";
import { revokeOutcome } from "./views";

describe("how a revoke ended, in words", () => {
  it("names a run's status as words and a repaired undo as nothing left out there", () => {
    expect(revokeOutcome({ kind: "RUN" }, { step: null, escalation: null, correction: null, runStatus: "NEEDS_ATTENTION" }).text).toBe("Every step was answered; the run is waiting for people.");
    const repaired = revokeOutcome(
      { kind: "COMPENSATE" },
      { step: { status: "COMPENSATION_FAILED", compensationState: "FAILED", compensationRef: null, manualRepair: { repairedBy: "rita@example.com" } }, escalation: null, correction: null },
    );
    expect(repaired.text).toMatch(/repaired it by hand, so nothing is left out there/);
    const failed = revokeOutcome({ kind: "COMPENSATE" }, { step: { status: "COMPENSATION_FAILED", compensationState: "FAILED", compensationRef: null }, escalation: null, correction: null });
    expect(failed.text).toMatch(/still out there/);
  });
});
