/**
 * GET /api/v1/runs: an agent's own runs, newest first, a page at a time, each as GET /api/v1/runs/:id
 * answers it; another agent's runs never appear.
 */
import { describe, expect, it } from "vitest";
import * as runRoute from "@/app/api/v1/runs/[runId]/route";
import * as runsRoute from "@/app/api/v1/runs/route";
import { call, makeToken, useTestDatabase } from "./api-test-kit";

const getPrisma = useTestDatabase("agent-runs");

describe("an agent's list of runs", () => {
  it("pages through the agent's own runs newest first, each as the run's own route answers it, and filters by status", async () => {
    const prisma = await getPrisma();
    const mine = await makeToken(["create_ticket_draft"], "agent-lists");
    const other = await makeToken(["create_ticket_draft"], "agent-other");
    const created: string[] = [];
    for (let i = 0; i < 5; i++) {
      created.push((await call(runsRoute.POST, "/api/v1/runs", { secret: mine.secret, body: { title: `run ${i}`, metadata: { i } } })).json.run.id as string);
      await call(runsRoute.POST, "/api/v1/runs", { secret: other.secret, body: { title: `other ${i}` } });
    }
    // Two runs with the same creation time: the list orders them by id.
    await prisma.run.updateMany({ where: { id: { in: created.slice(1, 3) } }, data: { createdAt: new Date("2026-01-01T00:00:00.000Z") } });
    const expected = await prisma.run.findMany({ where: { agent: "agent-lists" }, orderBy: [{ createdAt: "desc" }, { id: "desc" }], select: { id: true } });
    expect(expected).toHaveLength(5);

    const seen: Record<string, unknown>[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 10; page++) {
      const res = await call(runsRoute.GET, `/api/v1/runs?take=2${cursor ? `&cursor=${cursor}` : ""}`, { secret: mine.secret });
      expect(res.status).toBe(200);
      const runs = res.json.runs as Record<string, unknown>[];
      expect(runs.length).toBeLessThanOrEqual(2);
      seen.push(...runs);
      cursor = res.json.nextCursor as string | null;
      if (!cursor) break;
    }
    expect(seen.map((r) => r.id)).toEqual(expected.map((r) => r.id));
    for (const run of seen) {
      const one = await call(runRoute.GET, `/api/v1/runs/${run.id as string}`, { secret: mine.secret, params: { runId: run.id as string } });
      expect(run).toEqual(one.json.run);
    }
    expect(seen.find((r) => r.title === "run 3")).toMatchObject({ agent: "agent-lists", metadata: { i: 3 }, status: "RUNNING" });

    // A whole page at once; a status no run has; a cursor naming no run.
    expect((await call(runsRoute.GET, "/api/v1/runs?take=50", { secret: mine.secret })).json).toEqual({ runs: seen, nextCursor: null });
    expect((await call(runsRoute.GET, "/api/v1/runs?status=COMPLETED", { secret: mine.secret })).json).toEqual({ runs: [], nextCursor: null });
    const last = (await call(runsRoute.GET, `/api/v1/runs?take=2&cursor=${seen.at(-1)!.id as string}`, { secret: mine.secret })).json;
    expect(last).toEqual({ runs: [], nextCursor: null });
  });
});
