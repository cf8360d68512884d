/**
 * The engine's observer (packages/client/src/saga/observer.ts) as spans, for what the saga records without an agent
 * API answer to trace: an in-process engine's logged calls, reconciles and compensations (the
 * dashboard's unwinds and revokes, `npm run worker` beside the database) are the same
 * `execute_tool`, `reconcile` and `compensate` spans the agent API makes (tracing.ts's traceStep);
 * an escalation the saga raises inside a call (a held call, a failure after the pivot, a failed
 * lookup or compensation) is a `raise_escalation` span naming its source.
 *
 * Each is a child of the span in progress (a worker task's, a person's action, the agent's request)
 * or else of the run's kept context (people-spans.ts's runSpanParent). Off (no OTLP endpoint), each
 * method returns at once: no read, no clock. An observer never fails the saga's work: what goes
 * wrong here is a warning.
 */
import type { PrismaClient } from "@/generated/prisma";
import type { SagaObserver } from "@/packages/client/src/saga/observer";
import type { Actor } from "@/packages/client/src/saga/store";
import { serverLog } from "./log";
import { actorAttributes, runSpanParent, traceEscalationRaised } from "./people-spans";
import { activeTracer, contextOf, traceStep } from "@/packages/client/src/protocol/tracing";

/** Who raised an escalation, as span attributes: the actor's kind, never its id (an email, a worker's host). */
function raisedBy(actor: Actor) {
  return actorAttributes(actor.type, actor.type);
}

const observers = new WeakMap<PrismaClient, SagaObserver>();
const escalationObservers = new WeakMap<PrismaClient, SagaObserver>();

/** The observer `make` builds for `prisma`, built once per client (the agent API asks on every request). */
function onePer(cache: WeakMap<PrismaClient, SagaObserver>, prisma: PrismaClient, make: () => SagaObserver): SagaObserver {
  let observer = cache.get(prisma);
  if (!observer) cache.set(prisma, (observer = make()));
  return observer;
}

/** The observer an in-process engine on `prisma`'s database takes (`SagaEngineOptions.observer`): steps and escalations. */
export function sagaSpans(prisma: PrismaClient): SagaObserver {
  return onePer(observers, prisma, () => ({
    async stepRecorded(operation, step, startedAt) {
      if (!activeTracer()) return;
      try {
        traceStep(operation, step, startedAt.getTime(), contextOf(await runSpanParent(prisma, step.runId)));
      } catch (e) {
        serverLog().warn({ runId: step.runId, stepId: step.id, err: e }, `could not trace the ${operation} of step ${step.id}`);
      }
    },
    ...escalationSpans(prisma),
  }));
}

/**
 * The observer of the agent API's store (observeStore): escalations only, since the API traces a
 * step's record from its answer (agent-requests.ts).
 */
export function escalationSpans(prisma: PrismaClient): SagaObserver {
  return onePer(escalationObservers, prisma, () => ({
    async escalationRaised(escalation, source, actor) {
      if (!activeTracer()) return;
      try {
        await traceEscalationRaised(prisma, escalation, source, raisedBy(actor));
      } catch (e) {
        serverLog().warn({ runId: escalation.runId, escalationId: escalation.id, err: e }, `could not trace the raise of escalation ${escalation.id}`);
      }
    },
  }));
}
