/**
 * HTTP transport of the TypeScript client. Its own network failures and timeouts against Sagaboard
 * are unknown outcomes, like a tool's, and are never blindly repeated:
 * - a mutation that is not idempotent by itself (creating a run) carries an Idempotency-Key and is
 *   re-sent with the SAME key, so the server answers with the stored response of the first attempt;
 * - the saga log's own writes are idempotent by construction and re-sent as they are: an intent has
 *   a unique key (a repeat returns the existing row), a transition is fenced (a repeat changes
 *   nothing and answers null, after which the engine re-reads the row).
 */
import { randomUUID } from "node:crypto";
import type { z } from "zod";
import { ZErrorBody } from "../../protocol/errors";
import { currentTraceparent } from "../../protocol/trace-scope";

/** An error answer from Sagaboard: code, message that says what to do, and the fields at fault. */
export class SagaboardApiError extends Error {
  constructor(
    /** HTTP status. */
    readonly status: number,
    /** Error code. */
    readonly code: string,
    message: string,
    /** The fields at fault. */
    readonly details: { path: string; message: string }[],
    /** Extra members (`escalationId`, `reason`). */
    readonly extra: Record<string, unknown>,
  ) {
    super(message);
    this.name = "SagaboardApiError";
  }
}

/** Options of the transport. */
export interface TransportOptions {
  /** Base URL of the Sagaboard app (`http://localhost:3000`). */
  baseUrl: string;
  /** The agent token (`sgb_...`). */
  token: string;
  /** Per-request timeout (default 10 s; long polls add their wait). */
  timeoutMs?: number;
  /** Re-sends after a network failure or timeout (default 4). */
  retries?: number;
  /** fetch to use (tests). */
  fetch?: typeof fetch;
  /**
   * The W3C `traceparent` of the agent's current span, read before every request and sent as the
   * `traceparent` header, so the server's spans for the call join the agent's trace. With
   * OpenTelemetry: `() => { const c: Record<string, string> = {}; propagation.inject(context.active(), c); return c.traceparent; }`.
   * Without it (or when it returns none), the trace context of the work in progress is sent: a
   * worker task's, the MCP gateway's tool call's (packages/client/src/protocol/trace-scope.ts).
   */
  traceparent?: () => string | undefined;
}

export class Transport {
  private readonly fetchImpl: typeof fetch;
  private readonly timeoutMs: number;
  private readonly retries: number;

  constructor(private readonly options: TransportOptions) {
    this.fetchImpl = options.fetch ?? fetch;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.retries = options.retries ?? 4;
  }

  /**
   * A POST as another process could send it (a process that is ending, process-flush.ts); null when
   * requests go through a fetch of the caller's own, which another process cannot use.
   */
  describe(path: string, body: unknown): { url: string; headers: Record<string, string>; body: string } | null {
    if (this.options.fetch) return null;
    return { url: new URL(path, this.options.baseUrl).toString(), headers: { authorization: `Bearer ${this.options.token}`, "content-type": "application/json" }, body: JSON.stringify(body) };
  }

  /** Sends a request and parses the success body with `schema`; throws SagaboardApiError on error answers. */
  async request<S extends z.ZodType>(
    method: "GET" | "POST" | "PATCH",
    path: string,
    schema: S,
    body?: unknown,
    /** `idempotencyKey`: true for a fresh key per request (kept across its re-sends), or the caller's own key. */
    options: { extraTimeoutMs?: number; idempotencyKey?: boolean | string } = {},
  ): Promise<z.output<S>> {
    const extraTimeoutMs = options.extraTimeoutMs ?? 0;
    const idempotencyKey = method === "GET" || !options.idempotencyKey ? null : options.idempotencyKey === true ? randomUUID() : options.idempotencyKey;
    let lastError: unknown;
    for (let attempt = 0; attempt <= this.retries; attempt++) {
      let response: Response;
      const traceparent = this.options.traceparent?.() ?? currentTraceparent();
      try {
        response = await this.fetchImpl(new URL(path, this.options.baseUrl), {
          method,
          headers: {
            authorization: `Bearer ${this.options.token}`,
            ...(body === undefined ? {} : { "content-type": "application/json" }),
            ...(idempotencyKey ? { "idempotency-key": idempotencyKey } : {}),
            ...(traceparent ? { traceparent } : {}),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(this.timeoutMs + extraTimeoutMs),
        });
      } catch (e) {
        // Unknown: the request may have been applied. Same key again, never a fresh mutation.
        lastError = e;
        await pause(attempt);
        continue;
      }
      if (response.status === 409 && idempotencyKey) {
        const peek = await readError(response);
        if (peek.code === "IDEMPOTENCY_IN_FLIGHT") {
          lastError = peek;
          await pause(attempt);
          continue;
        }
        throw peek;
      }
      if (response.status >= 500 && response.status !== 501) {
        // A 503 says when to come back (Sagaboard's database is away for a moment): wait at least that.
        const retryAfterMs = retryAfter(response);
        lastError = await readError(response);
        if (attempt < this.retries) await pause(attempt, retryAfterMs);
        continue;
      }
      if (!response.ok) throw await readError(response);
      return schema.parse(await response.json());
    }
    throw lastError instanceof Error ? lastError : new Error(`Sagaboard did not answer ${method} ${path}`);
  }
}

async function readError(response: Response): Promise<SagaboardApiError> {
  const text = await response.text();
  try {
    const parsed = ZErrorBody.parse(JSON.parse(text));
    const { code, message, details, ...extra } = parsed.error;
    return new SagaboardApiError(response.status, code, message, details, extra);
  } catch {
    return new SagaboardApiError(response.status, "UNEXPECTED_RESPONSE", `Sagaboard answered ${response.status}: ${text.slice(0, 200)}`, [], {});
  }
}

/** The Retry-After header's delay in ms (seconds form only), capped at 30 s; 0 without one. */
function retryAfter(response: Response): number {
  const seconds = Number(response.headers.get("retry-after"));
  return Number.isFinite(seconds) && seconds > 0 ? Math.min(30_000, seconds * 1000) : 0;
}

function pause(attempt: number, atLeastMs = 0): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(atLeastMs, Math.min(2000, 100 * 2 ** attempt))));
}
