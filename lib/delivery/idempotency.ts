/**
 * The IETF Idempotency-Key draft (draft-ietf-httpapi-idempotency-key-header) for mutating requests
 * that carry the header. Keys are scoped per principal; the unique (principal, key) index, not an
 * application check, decides who runs the request:
 *
 * - first request: insert an IN_FLIGHT row, run the handler, store its status and body, mark DONE;
 * - same key, same request (sha256 of method, path and canonical JSON body): replay the stored
 *   response with `Idempotent-Replayed: true`;
 * - same key, different request: 422 IDEMPOTENCY_KEY_REUSED;
 * - same key while the first is still IN_FLIGHT: 409 IDEMPOTENCY_IN_FLIGHT.
 *
 * 2xx and 4xx responses are stored and replayed; on a 5xx (or a throw) the row is deleted so the
 * client may retry with the same key. An IN_FLIGHT row older than `abandonedAfterMs` (a server that
 * died mid-request) is deleted by the next request with that key, which then runs.
 */
import { createHash } from "node:crypto";
import { Prisma, type PrismaClient } from "@/generated/prisma";
import { randomIds } from "@/packages/client/src/saga/ids";
import { canonicalJson } from "@/packages/client/src/saga/keys";
import type { Json } from "@/packages/client/src/saga/tools";
import { ApiError } from "@/packages/client/src/protocol/errors";
import { TX_OPTIONS } from "@/lib/core/db/transactions";
import { serverLog } from "@/lib/core/observability/log";
import { isUniqueViolation } from "@/lib/core/db/prisma-errors";

/** The request header carrying the key. */
export const IDEMPOTENCY_KEY_HEADER = "Idempotency-Key";

/** The response header set on a replayed response. */
export const IDEMPOTENT_REPLAYED_HEADER = "Idempotent-Replayed";

/** Methods the key applies to; on other methods the header is ignored. */
export const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** After this long an IN_FLIGHT row is taken to be abandoned by a crashed server. */
export const DEFAULT_ABANDONED_AFTER_MS = 120_000;

/** Row states. */
export const IdempotentRequestState = {
  /** The first request with the key is being processed. */
  IN_FLIGHT: "IN_FLIGHT",
  /** Its response is stored and answers repeats. */
  DONE: "DONE",
} as const;

const KEY_PATTERN = /^[\x20-\x7E]{1,255}$/;

/**
 * The key from the header value, or null without the header. Accepts the draft's structured-field
 * string (`"abc"`) and a bare token (`abc`). Throws VALIDATION_FAILED unless it is 1-255 printable
 * ASCII characters.
 */
export function parseIdempotencyKey(headerValue: string | null): string | null {
  if (headerValue === null) return null;
  const quoted = /^"(.*)"$/.exec(headerValue);
  const key = quoted ? (quoted[1] ?? "") : headerValue;
  if (!KEY_PATTERN.test(key)) {
    throw new ApiError(
      "VALIDATION_FAILED",
      `The ${IDEMPOTENCY_KEY_HEADER} header must be 1-255 printable ASCII characters (a UUID is a good choice).`,
      { details: [{ path: `headers.${IDEMPOTENCY_KEY_HEADER}`, message: "must be 1-255 printable ASCII characters" }] },
    );
  }
  return key;
}

/** What identifies a request for the key-reuse check. */
export interface RequestFingerprint {
  /** HTTP method. */
  method: string;
  /** URL path with its query string (`/api/v1/runs?x=1`). */
  path: string;
  /** The parsed JSON body (undefined when there is none). */
  body: unknown;
}

/** sha256 hex of method, path and canonical JSON body: equal for reordered keys or whitespace. */
export function requestHash({ method, path, body }: RequestFingerprint): string {
  return createHash("sha256")
    .update(`${method.toUpperCase()}\n${path}\n${canonicalJson(body ?? null)}`)
    .digest("hex");
}

/** A response worth storing: status and JSON body. */
export interface StoredResponse {
  /** HTTP status. */
  status: number;
  /** JSON body. */
  body: Json;
}

/** One idempotent request. */
export interface IdempotentRequestInput extends RequestFingerprint {
  /** Who sent it (`agent:tok_...`): the same key from another principal is another request. */
  principal: string;
  /** The Idempotency-Key. */
  key: string;
}

/** Options of `withIdempotency`. */
export interface IdempotencyOptions {
  /** After this long an IN_FLIGHT row counts as abandoned (default DEFAULT_ABANDONED_AFTER_MS). */
  abandonedAfterMs?: number;
}

/** The response to send, and whether it is a replay of a stored one. */
export interface IdempotentOutcome {
  /** Status and body. */
  response: StoredResponse;
  /** True when the handler did not run and the stored response answers. */
  replayed: boolean;
}

type ExistingRow = Prisma.IdempotentRequestGetPayload<object>;

/**
 * Runs `produce` at most once per (principal, key) while its response is stored, answering repeats
 * from the store. `produce` should turn its own errors into responses (4xx are stored); if it
 * throws, the row is deleted and the error propagates.
 */
export async function withIdempotency(
  prisma: PrismaClient,
  input: IdempotentRequestInput,
  produce: () => Promise<StoredResponse>,
  options: IdempotencyOptions = {},
): Promise<IdempotentOutcome> {
  const abandonedAfterMs = options.abandonedAfterMs ?? DEFAULT_ABANDONED_AFTER_MS;
  const hash = requestHash(input);
  // A few rounds: the row we collided with may be deleted (5xx, abandoned) before we read it.
  for (let round = 0; round < 5; round++) {
    const claimedId = await claim(prisma, input, hash);
    if (claimedId) return { response: await runClaimed(prisma, claimedId, produce), replayed: false };

    const existing = await prisma.$transaction(
      (tx) => tx.idempotentRequest.findUnique({ where: { principal_key: { principal: input.principal, key: input.key } } }),
      TX_OPTIONS,
    );
    if (!existing) continue;
    if (existing.requestHash !== hash) throw keyReused(input, existing);
    if (existing.state === IdempotentRequestState.DONE && existing.responseStatus !== null) {
      return { response: { status: existing.responseStatus, body: existing.responseBody as Json }, replayed: true };
    }
    if (Date.now() - existing.createdAt.getTime() <= abandonedAfterMs) {
      throw new ApiError(
        "IDEMPOTENCY_IN_FLIGHT",
        `A request with ${IDEMPOTENCY_KEY_HEADER} "${input.key}" is still being processed. ` +
          "Wait for it and retry with the same key to get its response; do not change the key.",
      );
    }
    // Abandoned by a server that died mid-request: remove it (fenced on what we read) and try again.
    await prisma.$transaction(
      (tx) =>
        tx.idempotentRequest.deleteMany({
          where: { id: existing.id, state: IdempotentRequestState.IN_FLIGHT, createdAt: existing.createdAt },
        }),
      TX_OPTIONS,
    );
  }
  throw new ApiError(
    "IDEMPOTENCY_IN_FLIGHT",
    `Requests with ${IDEMPOTENCY_KEY_HEADER} "${input.key}" keep colliding; retry with the same key in a moment.`,
  );
}

/** Inserts the IN_FLIGHT row; its id, or null when the (principal, key) row already exists. */
async function claim(prisma: PrismaClient, input: IdempotentRequestInput, hash: string): Promise<string | null> {
  const id = randomIds.next("idem");
  try {
    await prisma.$transaction(
      (tx) =>
        tx.idempotentRequest.create({
          data: {
            id,
            principal: input.principal,
            key: input.key,
            method: input.method.toUpperCase(),
            path: input.path,
            requestHash: hash,
            state: IdempotentRequestState.IN_FLIGHT,
            createdAt: new Date(),
          },
        }),
      TX_OPTIONS,
    );
    return id;
  } catch (e) {
    if (isUniqueViolation(e)) return null;
    throw e;
  }
}

async function runClaimed(prisma: PrismaClient, id: string, produce: () => Promise<StoredResponse>): Promise<StoredResponse> {
  let response: StoredResponse;
  try {
    response = await produce();
  } catch (e) {
    await release(prisma, id);
    throw e;
  }
  if (response.status >= 500) {
    await release(prisma, id);
    return response;
  }
  try {
    await prisma.$transaction(
      (tx) =>
        tx.idempotentRequest.updateMany({
          where: { id, state: IdempotentRequestState.IN_FLIGHT },
          data: {
            state: IdempotentRequestState.DONE,
            responseStatus: response.status,
            responseBody: response.body === null ? Prisma.JsonNull : response.body,
            completedAt: new Date(),
          },
        }),
      TX_OPTIONS,
    );
  } catch (e) {
    // The effect happened but its response is not stored: free the key rather than block it for good.
    serverLog().error({ err: e, idempotencyId: id }, "could not store an idempotent response; the key is released");
    await release(prisma, id);
  }
  return response;
}

/** Deletes an IN_FLIGHT row so the client may retry with the same key. */
async function release(prisma: PrismaClient, id: string): Promise<void> {
  try {
    await prisma.$transaction(
      (tx) => tx.idempotentRequest.deleteMany({ where: { id, state: IdempotentRequestState.IN_FLIGHT } }),
      TX_OPTIONS,
    );
  } catch (e) {
    serverLog().error({ err: e, idempotencyId: id }, "could not release an idempotency key; it expires after the abandonment timeout");
  }
}

function keyReused(input: IdempotentRequestInput, existing: ExistingRow): ApiError {
  return new ApiError(
    "IDEMPOTENCY_KEY_REUSED",
    `${IDEMPOTENCY_KEY_HEADER} "${input.key}" was already used for a different request (${existing.method} ${existing.path} ` +
      "with another body). Use a new key for a new request; reuse a key only to retry the identical request.",
    { details: [{ path: `headers.${IDEMPOTENCY_KEY_HEADER}`, message: "already used for a different request" }] },
  );
}
