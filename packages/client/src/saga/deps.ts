import type { Clock } from "./clock";
import type { CrashPoints } from "./crash-points";
import type { IdGenerator } from "./ids";
import type { SagaObserver } from "./observer";
import type { SagaServer } from "./agent-port";
import type { Actor, SagaStore } from "./store";
import type { ToolRegistry } from "./tools";

/** Everything the engine's use cases need, injected so tests can fake each piece. */
export interface EngineDeps {
  /** Persistence (the port). */
  store: SagaStore;
  /** Known tools and compensators. */
  registry: ToolRegistry;
  /** Time; a manual clock makes lag and pauses deterministic. */
  clock: Clock;
  /** Id generation. */
  ids: IdGenerator;
  /** Named crash points (tests only). */
  crashPoints: CrashPoints;
  /** Pause before reconcile looks a key up a second time, because search indexes lag. */
  recheckAfterMs: number;
  /** Calls (or lookups) attempted under one key when the provider says "not done, try later". */
  maxAttempts: number;
  /** First backoff pause; doubles on each attempt. */
  backoffMs: number;
  /** Who the system is in the audit log. */
  systemActor: Actor;
  /** Told of the steps and escalations this process records (traces); absent: nothing is told. */
  observer?: SagaObserver;
}

/**
 * What the agent side needs (a run as an agent drives it, unwinds from this process): the engine's
 * deps with exactly one deciding side, this process's store or a server.
 */
export type AgentDeps = Omit<EngineDeps, "store"> &
  (
    | {
        /** This process decides, on its own store. */
        store: SagaStore;
        server: null;
      }
    | {
        store: null;
        /** A server decides (over HTTP); this process only calls tools, looks keys up and sends compensations. */
        server: SagaServer;
      }
  );

/** Backoff before attempt `attempt + 1` (attempt counts from 1). */
export function backoffDelay(deps: Pick<EngineDeps, "backoffMs">, attempt: number): number {
  return deps.backoffMs * 2 ** (attempt - 1);
}
