/**
 * Spans of what people (and the sweeps acting for them) do to a run: a pivot decided (approved or
 * rejected by a reviewer, rejected by the SLA sweep at expiry), an escalation raised and resolved, a
 * revoke pulled. Each is a child of the run's kept trace context (run-trace.ts says why a child and
 * not a link), so it shows in the agent's trace. Who acted is a role (`reviewer`, `admin`, `sla`),
 * never an email: attributes are indexed and kept, and a role is what a person reading a trace needs.
 *
 * The work runs with the span's own context as the current trace context (trace-scope.ts), so a
 * worker task it enqueues (a revoke's compensation, a stuck run's commit) carries it, and the
 * worker's spans are children of the person's decision.
 *
 * Off (no OTLP endpoint): `inRunSpan` runs the work and nothing else, no read, no clock.
 */
import { SpanKind, SpanStatusCode, type Attributes, type Span } from "@opentelemetry/api";
import type { PrismaClient } from "@/generated/prisma";
import type { EscalationSource } from "@/packages/client/src/saga/observer";
import { serverLog } from "./log";
import { runTraceparent } from "./run-trace";
import { currentTraceparent, withTraceparent } from "@/packages/client/src/protocol/trace-scope";
import { activeTracer, contextOf, traceparentOf } from "@/packages/client/src/protocol/tracing";

/** The span names of people's actions (Sagaboard's own operations: the GenAI conventions name none of them). */
export type RunActionSpan = "decide_pivot" | "raise_escalation" | "resolve_escalation" | "revoke";

/** Who acted, as span attributes: the kind of actor and a low-cardinality role. */
export function actorAttributes(type: "user" | "system" | "agent", role: string): Attributes {
  return { "sagaboard.actor.type": type, "sagaboard.actor.role": role };
}

/**
 * The parent of a span of run `runId`: the span in progress (an escalation a revoke raises is the
 * revoke's child, one a held call raises the agent's request's), else the run's kept trace context.
 * A failed read is logged and the span starts a trace of its own (tracing never fails the action).
 */
export async function runSpanParent(prisma: PrismaClient, runId: string): Promise<string | undefined> {
  const current = currentTraceparent();
  if (current) return current;
  try {
    return await runTraceparent(prisma, runId);
  } catch (e) {
    serverLog().warn({ runId, err: e }, "could not read the run's trace context; its span starts a trace of its own");
    return undefined;
  }
}

/**
 * Runs `work` as the span `name` of run `runId`: a child of the span in progress (an escalation a
 * revoke raises is the revoke's child), else of the run's kept trace context, carrying
 * `attributes` and, once the work is done, `describe(result)` (what came of it). An error of the work
 * marks the span and is rethrown unchanged.
 */
export async function inRunSpan<T>(prisma: PrismaClient, name: RunActionSpan, runId: string, attributes: Attributes, work: () => Promise<T>, describe?: (result: T) => Attributes): Promise<T> {
  const tracer = activeTracer();
  if (!tracer) return work();
  const parent = await runSpanParent(prisma, runId);
  const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes: { "sagaboard.operation": name, "sagaboard.run.id": runId, ...attributes } }, contextOf(parent));
  try {
    const result = await withTraceparent(traceparentOf(span.spanContext()), work);
    if (describe) span.setAttributes(describe(result));
    return result;
  } catch (e) {
    markFailed(span, e);
    throw e;
  } finally {
    span.end();
  }
}

function markFailed(span: Span, e: unknown): void {
  span.recordException(e instanceof Error ? e : String(e));
  span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof Error ? e.message : String(e) });
}

/** What an escalation span says of it. */
export interface EscalationFacts {
  /** `esc_...` */
  id: string;
  /** Its run. */
  runId: string;
  /** Its step, when it is about one. */
  stepId: string | null;
  /** EscalationKind. */
  kind: string;
}

/** The attributes of an escalation. */
export function escalationAttributes(escalation: EscalationFacts): Attributes {
  return {
    "sagaboard.escalation.id": escalation.id,
    "sagaboard.escalation.kind": escalation.kind.toLowerCase(),
    ...(escalation.stepId ? { "sagaboard.step.id": escalation.stepId } : {}),
  };
}

/**
 * A `raise_escalation` span for an escalation just raised (`source`: what raised it, an
 * EscalationSource of packages/client/src/saga/observer.ts), in the run's trace. Raising it again (same dedupe key)
 * is no new span: callers trace only what they created.
 */
export async function traceEscalationRaised(prisma: PrismaClient, escalation: EscalationFacts, source: EscalationSource, actor: Attributes): Promise<void> {
  if (!activeTracer()) return;
  await inRunSpan(prisma, "raise_escalation", escalation.runId, { ...escalationAttributes(escalation), "sagaboard.escalation.source": source, ...actor }, async () => undefined);
}
