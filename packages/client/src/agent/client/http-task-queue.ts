/** The worker task queue over the HTTP API, for a worker process holding a worker token. */
import * as api from "../../protocol/contracts/worker";
import { fromWire } from "../../protocol/schemas/saga";
import { Transport, type TransportOptions } from "./transport";
import { type TaskQueue, type ClaimedTask, type WorkerTaskRecord } from "../../protocol/tasks/task";

const DATES = ["leaseUntil", "createdAt", "updatedAt"] as const;
const task = (w: object) => fromWire<WorkerTaskRecord>(w, DATES);
const path = (template: string, taskId: string) => template.replace(":taskId", encodeURIComponent(taskId));

export class HttpTaskQueue implements TaskQueue {
  private readonly http: Transport;

  constructor(options: TransportOptions) {
    this.http = new Transport(options);
  }

  /**
   * A claim is sent as it is: when its answer is lost after the server granted tasks, the re-send finds
   * them claimed and gets nothing, and they wait for their lease to run out (then another claim takes
   * them, attempt + 1). A key per claim would save that wait at the cost of one stored request per
   * poll, for every idle worker, every second, with nothing that expires them.
   */
  async claim(request: { workerId: string; tools: string[]; max: number; leaseMs: number }): Promise<ClaimedTask[]> {
    const res = await this.http.request("POST", api.claimWorkerTasks.path, api.claimWorkerTasks.response, request);
    return res.tasks.map((t) => task(t) as ClaimedTask);
  }

  /**
   * A completion and a failure carry an Idempotency-Key, kept across the transport's re-sends (one
   * stored request per settled task): when the answer is lost after the server recorded it, the
   * re-send is answered "settled" instead of being refused by the task's own fence, which the worker
   * would report as superseded by another worker, and a re-sent retry is not mistaken for a stale one.
   */
  async complete(request: { taskId: string; attempt: number; workerId: string; result: unknown }) {
    const { taskId, ...body } = request;
    const res = await this.http.request("POST", path(api.completeWorkerTask.path, taskId), api.completeWorkerTask.response, body, { idempotencyKey: true });
    return settle(res);
  }

  async fail(request: { taskId: string; attempt: number; workerId: string; error: unknown; retry: boolean }) {
    const { taskId, ...body } = request;
    const res = await this.http.request("POST", path(api.failWorkerTask.path, taskId), api.failWorkerTask.response, body, { idempotencyKey: true });
    return settle(res);
  }

  async extendLease(request: { taskId: string; attempt: number; workerId: string; leaseMs: number }) {
    const { taskId, ...body } = request;
    const res = await this.http.request("POST", path(api.heartbeatWorkerTask.path, taskId), api.heartbeatWorkerTask.response, body);
    return res.extended && res.leaseUntil
      ? { extended: true as const, leaseUntil: new Date(res.leaseUntil) }
      : { extended: false as const, task: res.task ? task(res.task) : null };
  }
}

function settle(res: { settled: boolean; task: object | null }) {
  if (res.settled && res.task) return { settled: true as const, task: task(res.task) };
  return { settled: false as const, task: res.task ? task(res.task) : null };
}
