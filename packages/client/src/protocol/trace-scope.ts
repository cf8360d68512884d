/**
 * The W3C `traceparent` that work in progress belongs to, carried through its awaits: a worker
 * running a task for a run sets it to the task's trace context, the MCP gateway to its client's
 * `_meta.traceparent`, the server to the agent's header while it answers; the HTTP client sends it
 * on every request made inside (packages/client/src/agent/client/transport.ts), and a task enqueued inside keeps it
 * (lib/server/worker/enqueue-task.ts). Plain node:async_hooks and no OpenTelemetry import: the packaged
 * client and worker bundle this file and must not pull the SDK in.
 */
import { AsyncLocalStorage } from "node:async_hooks";

const scope = new AsyncLocalStorage<string>();

/** `00-<32 hex trace id>-<16 hex span id>-<2 hex flags>`, neither id all zeros (W3C Trace Context, version 00). */
const TRACEPARENT = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;

/** Whether `value` is a version-00 traceparent header a tracer accepts. */
export function isTraceparent(value: unknown): value is string {
  return typeof value === "string" && TRACEPARENT.test(value);
}

/** Runs `fn` with `traceparent` as the current trace context (a missing or malformed one: `fn` runs as it is). */
export function withTraceparent<T>(traceparent: string | null | undefined, fn: () => T): T {
  return isTraceparent(traceparent) ? scope.run(traceparent, fn) : fn();
}

/** The trace context of the work in progress, or undefined outside any. */
export function currentTraceparent(): string | undefined {
  return scope.getStore();
}

/**
 * A worker task's trace context rides in its payload as `traceparent`: every payload on the wire is
 * loose (a field a newer server adds reaches an older worker untouched), so workers in any language
 * read it with no new column or wire field, and a worker that does not know it ignores it.
 */
const TASK_TRACE_FIELD = "traceparent";

/** `payload` with the task's trace context added (an object payload only; none to add: unchanged). */
export function withTaskTrace<P>(payload: P, traceparent: string | undefined): P {
  if (!isTraceparent(traceparent) || !payload || typeof payload !== "object" || Array.isArray(payload)) return payload;
  return { ...payload, [TASK_TRACE_FIELD]: traceparent };
}

/** The trace context a task's payload carries, if any (a malformed one is none). */
export function taskTraceparent(payload: unknown): string | undefined {
  if (!payload || typeof payload !== "object" || Array.isArray(payload)) return undefined;
  const value = (payload as Record<string, unknown>)[TASK_TRACE_FIELD];
  return isTraceparent(value) ? value : undefined;
}
