/**
 * The call commands over HTTP: the engine's `CallPort` when the server decides. The agent sends the
 * tool, its arguments and its cursor; the server answers what it may do (lib/server/agent-api/begin-call.ts).
 */
import * as api from "../../protocol/contracts/calls";
import type * as z from "zod";
import { outcomeBody, reconcileBody, type ZStepCompensateActionWire, type ZUnwindActionWire } from "../../protocol/schemas/calls";
import { DATE_FIELDS, fromWire } from "../../protocol/schemas/saga";
import { fillPath } from "../../protocol/endpoint";
import type { BeginCallAnswer, ConnectorAction, UnwindReport } from "../../saga/messages";
import type { ApprovalReason } from "../../saga/vocabulary";
import type { RunRecord, StepRecord } from "../../saga/store";
import type { CallPort, UnwindPort } from "../../saga/agent-port";
import type { Transport } from "./transport";
import { answeredRefusal, flushProcess, OutcomePipeline, type WaitingOutcome } from "./outcome-pipeline";
import { StepStatus } from "../../saga/vocabulary";

const step = (w: object) => fromWire<StepRecord>(w, DATE_FIELDS.step);
const run = (w: object) => fromWire<RunRecord>(w, DATE_FIELDS.run);

/**
 * Sends `request` carrying the run's waiting outcome (`pipeline`, outcome-pipeline.ts) as `previous`.
 * Without an answer (the network, a 5xx) the outcome is given back; with one it was recorded, or
 * refused and the refusal, naming `previous`, is thrown. Before a refusal is thrown, every other
 * outcome the process holds is sent: the agent may stop on it.
 */
async function withPrevious<T>(pipeline: OutcomePipeline, runId: string, request: (previous: WaitingOutcome | undefined) => Promise<T>): Promise<T> {
  const previous = await pipeline.take(runId);
  try {
    const answer = await request(previous);
    if (previous) pipeline.answered(previous);
    return answer;
  } catch (e) {
    if (!answeredRefusal(e)) {
      if (previous) pipeline.giveBack(runId, previous);
      throw e;
    }
    if (previous) pipeline.answered(previous);
    await flushProcess({ refusals: "keep" });
    throw e;
  }
}

/** Every outcome in its own request. */
const NO_PIPELINE = new OutcomePipeline(0, () => Promise.reject(new Error("outcomes are not pipelined here")));

/** The commands, sent through `send` (which maps error answers to the engine's errors). */
export function httpCallPort(http: Transport, send: <T>(fn: () => Promise<T>) => Promise<T>, pipeline: OutcomePipeline = NO_PIPELINE): CallPort {
  return {
    async begin(input) {
      const address = input.planItem ? { planItem: input.planItem } : { cursor: input.cursor };
      const call = { tool: input.tool, args: input.args, ...address, compensation: input.proposal.compensation, correction: input.proposal.correction, audience: input.proposal.audience };
      // No idempotency key: the log makes a begin idempotent by itself (a repeat at the same cursor is
      // answered from the row the first one wrote: reconcile, then replay or retry under the same key),
      // and a key would cost two more writes on every step. The same holds for the outcome it carries.
      const res = await withPrevious(pipeline, input.runId, (previous) =>
        send(() => http.request("POST", fillPath(api.beginCall.path, { runId: input.runId }), api.beginCall.response, previous ? { ...call, previous } : call)),
      );
      if (res.answer === "held") {
        return { kind: "held", reason: res.reason as ApprovalReason, message: res.message, escalationId: res.escalationId, pivotId: res.pivotId, cursor: res.cursor };
      }
      return { kind: res.answer, step: step(res.step), cursor: res.cursor } as BeginCallAnswer;
    },
    async outcome(input) {
      const attempts = input.step.attempts + input.attempts;
      if (pipeline.on && input.outcome.kind === "confirmed") {
        // Sent with the run's next command: the step as it will be recorded, CONFIRMED with this effect.
        pipeline.hold(input.step.runId, { stepId: input.step.id, ...outcomeBody(input.outcome, attempts) } as WaitingOutcome);
        return { ...input.step, status: StepStatus.CONFIRMED, externalRef: input.outcome.externalRef, result: input.outcome.result, error: null, attempts };
      }
      const res = await send(() => http.request("POST", fillPath(api.reportOutcome.path, { stepId: input.step.id }), api.reportOutcome.response, outcomeBody(input.outcome, attempts)));
      // A failure or an unknown outcome is thrown to the agent next, which may stop on it: send what waits first.
      if (input.outcome.kind !== "confirmed") await flushProcess({ refusals: "keep" });
      return step(res.step);
    },
    async reconciled(input) {
      const res = await send(() => http.request("POST", fillPath(api.reportReconcile.path, { stepId: input.step.id }), api.reportReconcile.response, reconcileBody(input.report)));
      return step(res.step);
    },
    async complete(input) {
      // Another engine of this process may hold an outcome of this run: it goes first, or the run is not settled.
      await flushProcess({ except: pipeline });
      const res = await withPrevious(pipeline, input.runId, (previous) =>
        send(() => http.request("POST", fillPath(api.completeRun.path, { runId: input.runId }), api.completeRun.response, previous ? { previous } : undefined)),
      );
      return run(res.run);
    },
  };
}

/** An action the server asks of this process's connectors, from the wire. */
function connectorAction(wire: z.output<typeof ZUnwindActionWire> | z.output<typeof ZStepCompensateActionWire>): ConnectorAction | null {
  if (wire.action === "reconcile") return { kind: "reconcile", step: step(wire.step) };
  if (wire.action === "compensate") return { kind: "compensate", step: step(wire.step), compensation: wire.compensation, compensationKey: wire.compensationKey, verifyFirst: wire.verifyFirst };
  return null;
}

/** The unwind commands, sent through `send`: the server walks the log; this process does what needs its connectors. */
export function httpUnwindPort(http: Transport, send: <T>(fn: () => Promise<T>) => Promise<T>): UnwindPort {
  return {
    async next(input) {
      const body = { reason: input.reason, ...(input.skipStepIds?.length ? { skipStepIds: [...input.skipStepIds] } : {}), draftedBy: input.draftedBy };
      const res = await send(() => http.request("POST", fillPath(api.nextUnwindAction.path, { runId: input.runId }), api.nextUnwindAction.response, body));
      if (res.action !== "done") return connectorAction(res)!;
      const { action: _done, status, ...steps } = res;
      return { kind: "done", report: { runId: input.runId, status: status as UnwindReport["status"], ...steps } };
    },
    async nextForStep(input) {
      const res = await send(() => http.request("POST", fillPath(api.nextCompensateAction.path, { stepId: input.stepId }), api.nextCompensateAction.response, { draftedBy: input.draftedBy }));
      return res.action === "done" ? { kind: "done", step: step(res.step) } : connectorAction(res)!;
    },
    async compensated(input) {
      const res = await send(() => http.request("POST", fillPath(api.reportCompensation.path, { stepId: input.step.id }), api.reportCompensation.response, input.report));
      return step(res.step);
    },
  };
}
