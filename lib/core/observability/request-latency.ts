/**
 * The agent API's latency, per operation (`beginCall`, `reportOutcome`...), as a Prometheus histogram
 * kept in this process: the hot path is a logged call's two requests, and a person watching the saga
 * wants to see them slow down before agents time out. Observing is two array writes, so it is always on.
 */
import { histogramSamples, type Family } from "./exposition";

/** Bucket bounds in seconds: a logged call's request is a few milliseconds; a long poll may hold for seconds. */
export const LATENCY_BOUNDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] as const;

interface Series {
  counts: number[];
  sum: number;
}

const series = new Map<string, Series>();

/** Records one request of `operation` that took `seconds`. */
export function observeRequestSeconds(operation: string, seconds: number): void {
  let s = series.get(operation);
  if (!s) series.set(operation, (s = { counts: new Array<number>(LATENCY_BOUNDS.length + 1).fill(0), sum: 0 }));
  let i = 0;
  while (i < LATENCY_BOUNDS.length && seconds > LATENCY_BOUNDS[i]!) i++;
  s.counts[i]! += 1;
  s.sum += seconds;
}

/** The histogram family of everything observed in this process since it started. */
export function requestLatencyFamily(): Family {
  return {
    name: "sagaboard_agent_api_request_duration_seconds",
    type: "histogram",
    help: "Time the agent API took to answer a request, by operation (beginCall and reportOutcome are a logged call's hot path); this process only.",
    samples: [...series.entries()].sort(([a], [b]) => a.localeCompare(b)).flatMap(([operation, s]) => histogramSamples(LATENCY_BOUNDS, s.counts, s.sum, { operation })),
  };
}
