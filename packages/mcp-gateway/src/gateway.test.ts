/**
 * The gateway's decisions with the server and the upstream played by fakes (the real ones are in
 * tests/mcp/gateway.test.ts): the pivot an irreversible call after staged ones asks for, commit with
 * the arguments the reviewer approved, and a rejected plan.
 */
import { describe, expect, it } from "vitest";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Json, PivotRecord, StepRecord } from "@sagaboard/client";
import { argsHash, type BeginCallAnswer, type PlanItemAddress } from "@sagaboard/client/wire";
import { Gateway } from "./gateway";
import type { Sagaboard } from "./sagaboard";
import type { Upstream } from "./upstream";
import { staticTools } from "./tool-watch";

const NS = "team";
const at = new Date("2026-12-03T10:00:00Z");

function stepRow(over: Partial<StepRecord>): StepRecord {
  return { id: "stp_1", runId: "run_1", stepIdx: 0, tool: `${NS}.stage_draft`, toolClass: "COMPENSATABLE", stepKey: "k0", args: {}, argsHash: "h", status: "CONFIRMED", phase: "STAGING", result: { content: [] }, ...over } as StepRecord;
}

function pivotRow(over: Partial<PivotRecord>): PivotRecord {
  return { id: "pvt_1", runId: "run_1", status: "PENDING", summary: "", plan: [], planHash: "", stagedStepIds: [], deadline: null, decidedBy: null, decidedAt: null, reason: null, createdAt: at, ...over } as PivotRecord;
}

/** A fake Sagaboard: one staged step, an irreversible tool held until the pivot covers it. */
function fakes(pivotAfterDecision: PivotRecord) {
  const calls: { begin: { tool: string; args: Json; planItem?: PlanItemAddress }[]; pivots: { plan: { tool: string; args: Json }[] }[]; upstream: { name: string; args: unknown }[] } = { begin: [], pivots: [], upstream: [] };
  let pivot: PivotRecord | null = null;
  const sagaboard = {
    steps: async () => [stepRow({})],
    pivots: async () => (pivot ? [pivot] : []),
    tools: async () => [{ name: `${NS}.send_letter`, toolClass: "IRREVERSIBLE", policyVersion: 2 }],
    requestPivot: async (_runId: string, _summary: string, plan: { tool: string; args: Json }[]) => {
      calls.pivots.push({ plan });
      pivot = pivotRow({ plan: plan.map((p) => ({ tool: p.tool, args: p.args, argsHash: argsHash(p.args), policyVersion: 2 })) as unknown as PivotRecord["plan"] });
      return pivot;
    },
    pivot: async () => pivot!,
    decide: () => (pivot = pivotAfterDecision),
    begin: async (_runId: string, cursor: number, tool: string, args: Json, { planItem }: { planItem?: PlanItemAddress } = {}): Promise<BeginCallAnswer> => {
      calls.begin.push({ tool, args, ...(planItem ? { planItem } : {}) });
      if (!planItem) return { kind: "held", reason: "IRREVERSIBLE", message: "irreversible", escalationId: "esc_1", pivotId: null, cursor };
      return { kind: "call", step: stepRow({ id: "stp_2", stepIdx: 1, tool, args, argsHash: argsHash(args), status: "INTENDED", phase: "COMMIT", stepKey: "k1" }), cursor: 1 };
    },
    outcome: async (step: StepRecord, outcome: { kind: string; result?: Json }) => ({ ...step, status: "CONFIRMED", result: outcome.result ?? null }) as StepRecord,
    escalation: async () => ({ status: "OPEN" }),
  };
  const upstream = {
    client: {
      callTool: async (req: { name: string; arguments: unknown }) => {
        calls.upstream.push({ name: req.name, args: req.arguments });
        return { content: [{ type: "text", text: "sent" }] };
      },
    },
    transport: { forget: () => undefined, answerFor: async () => null },
  };
  const tools: Tool[] = [{ name: "send_letter", inputSchema: { type: "object" } }];
  const gateway = new Gateway({
    sagaboard: sagaboard as unknown as Sagaboard,
    upstream: upstream as unknown as Upstream,
    tools: staticTools(tools),
    namespace: NS,
    runId: "run_1",
    dashboardUrl: "http://sagaboard.test",
    lookups: {},
    holdWaitMs: 0,
  });
  return { gateway, calls, decide: sagaboard.decide };
}

const signal = new AbortController().signal;
const letter = { to: "ada@example.com", body: "Your refund is on its way." };

describe("the gateway's pivot", () => {
  it("asks for one pivot for an irreversible call after staged ones, then commits it with the arguments the reviewer approved", async () => {
    const edited = { ...letter, body: "Your refund of EUR 18.00 is on its way." };
    const { gateway, calls, decide } = fakes(pivotRow({ status: "APPROVED", plan: [{ tool: `${NS}.send_letter`, args: edited, argsHash: argsHash(edited), policyVersion: 2 }] as unknown as PivotRecord["plan"] }));
    await gateway.load();
    const held = await gateway.call("send_letter", letter, undefined, signal);
    expect(held.isError).toBe(true);
    expect(held._meta).toMatchObject({ "dev.sagaboard/held": true, "dev.sagaboard/pivotId": "pvt_1" });
    expect(held.content[0]!.text).toContain("http://sagaboard.test/pivots/pvt_1");
    expect(calls.pivots).toEqual([{ plan: [{ tool: `${NS}.send_letter`, args: letter }] }]);
    expect(calls.upstream).toEqual([]);

    decide();
    const sent = await gateway.call("send_letter", letter, undefined, signal);
    expect(sent.isError ?? false).toBe(false);
    expect(sent._meta).toMatchObject({ "dev.sagaboard/editedByReviewer": true, "dev.sagaboard/sentArguments": edited });
    expect(calls.begin.at(-1)).toEqual({ tool: `${NS}.send_letter`, args: edited, planItem: { pivotId: "pvt_1", index: 0 } });
    expect(calls.upstream).toEqual([{ name: "send_letter", args: edited }]);
    expect(calls.pivots).toHaveLength(1);
  });

  it("a rejected plan answers the re-sent call with the reason and sends nothing", async () => {
    const { gateway, calls, decide } = fakes(pivotRow({ status: "REJECTED", reason: "wrong customer" }));
    await gateway.load();
    await gateway.call("send_letter", letter, undefined, signal);
    decide();
    const answer = await gateway.call("send_letter", letter, undefined, signal);
    expect(answer.content[0]!.text).toBe("A reviewer rejected the plan with send_letter: wrong customer; it was not sent.");
    expect(calls.upstream).toEqual([]);
  });
});
