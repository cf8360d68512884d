import { describe, expect, it } from "vitest";
import { compensationStillOut, repairedByHand, stepStanding } from "./step-standing";

describe("where a step stands", () => {
  it("is its status, except a failed undo a person repaired by hand, which leaves nothing out there", () => {
    const repair = { repairedBy: "rita@example.com", repairedAt: "2026-12-07T10:00:00.000Z", repairRef: null, note: "done by hand", escalationId: "esc_1" };
    expect(stepStanding({ status: "COMPENSATION_FAILED", manualRepair: null })).toBe("COMPENSATION_FAILED");
    expect(compensationStillOut({ status: "COMPENSATION_FAILED", manualRepair: null })).toBe(true);
    expect(stepStanding({ status: "COMPENSATION_FAILED", manualRepair: repair })).toBe("REPAIRED_BY_HAND");
    expect(repairedByHand({ status: "COMPENSATION_FAILED", manualRepair: repair })).toBe(true);
    expect(compensationStillOut({ status: "COMPENSATION_FAILED", manualRepair: repair })).toBe(false);
    // A repair recorded on any other status changes nothing (the store only records it on a failed undo).
    expect(stepStanding({ status: "CONFIRMED", manualRepair: repair })).toBe("CONFIRMED");
    // A status nobody knows may hide an effect: it stands like UNKNOWN.
    expect(stepStanding({ status: "SOMETHING_NEW" })).toBe("UNKNOWN");
  });
});
