import { afterEach, describe, expect, it, vi } from "vitest";
import { ZRunsPage, ZRunTimelineWire } from "./views";
import { DashboardRequestError, getParsed } from "@/components/dashboard/live";

function answer(body: unknown) {
  vi.stubGlobal("fetch", vi.fn(async () => new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } })));
}

afterEach(() => vi.unstubAllGlobals());

describe("getParsed", () => {
  it("returns an answer the contract's schema accepts", async () => {
    const page = { runs: [], nextCursor: null, waiting: { pendingPivots: 1, openEscalations: { APPROVAL_REQUIRED: 0, COMPENSATION_FAILED: 0, OUTCOME_UNKNOWN: 0, STUCK_AFTER_PIVOT: 0, REVOKE_OUT_OF_WINDOW: 0 }, openEscalationTotal: 0, correctionDrafts: 0 } };
    answer(page);
    await expect(getParsed("/api/dashboard/runs", ZRunsPage)).resolves.toEqual(page);
  });

  it("refuses an answer of another shape, naming the field, instead of rendering it", async () => {
    answer({ runs: "nope", nextCursor: null });
    const error = await getParsed("/api/dashboard/runs", ZRunsPage).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DashboardRequestError);
    expect((error as DashboardRequestError).code).toBe("UNEXPECTED_RESPONSE");
    expect((error as Error).message).toMatch(/runs: /);
  });

  it("checks a run timeline's progress in full, so a page never renders a timeline without it", () => {
    const timeline = { run: { id: "run_1", title: "t", status: "COMMITTING" }, steps: [], pivots: [], escalations: [], corrections: [], auditEvents: [], irreversibleBeforePivot: 0, irreversibleSteps: 1 };
    const progress = { lastContact: null, expected: "x", waitingOn: "agent", stuckAt: null, stuckEscalationId: null, checkedAt: "2026-12-01T10:00:00.000Z" };
    expect(ZRunTimelineWire.safeParse({ ...timeline, progress }).success).toBe(true);
    expect(ZRunTimelineWire.safeParse(timeline).success).toBe(false);
    expect(ZRunTimelineWire.safeParse({ ...timeline, progress: { ...progress, waitingOn: "somebody" } }).success).toBe(false);
  });
});
