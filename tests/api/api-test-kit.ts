/**
 * Shared set-up for the API tests: a fresh database per test file (a SQLite file, or with
 * SAGABOARD_TEST_PG=1 a throwaway PostgreSQL database: tests/support/test-database.ts), reached the
 * way route handlers reach it (DATABASE_URL + getPrisma), and a way to call a route handler without a
 * server.
 *
 * Use getPrisma() for direct set-up too: a second client on the same file in the same process could
 * deadlock (better-sqlite3 waits for locks synchronously; see tests/integration/prisma-store.test.ts).
 */
import { afterAll, beforeAll } from "vitest";
import { getPrisma, type PrismaClient } from "@/lib/core/db/prisma";
import type { RouteHandler } from "@/lib/delivery/route";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { syncToolPolicies } from "@/lib/server/tools/sync-tool-policies";
import { World } from "@/lib/demo/sim";
import { createAgentToken } from "@/lib/server/tokens/create-agent-token";
import { reserveTestDatabase } from "../support/test-database";

/**
 * Points DATABASE_URL at a new migrated database for this test file (this run's store); call at
 * module top level, before anything calls getPrisma(). Vitest runs each test file in its own process
 * (pool: forks), and child processes a test starts inherit DATABASE_URL.
 */
export function useTestDatabase(label: string): () => Promise<PrismaClient> {
  const db = reserveTestDatabase(`api-${label}`);
  process.env.DATABASE_URL = db.url;
  beforeAll(() => db.create());
  afterAll(async () => {
    await (await getPrisma()).$disconnect();
    await db.drop();
  });
  return getPrisma;
}

let tokenCounter = 0;

/**
 * Adds the support tools (charge_card, send_email, ...) missing from the tool table (idempotent):
 * createAgentToken refuses a tool the table does not have.
 */
export async function addSupportTools(): Promise<void> {
  await syncToolPolicies(await getPrisma(), createSupportToolRegistry(new World()), "system:test");
}

/** Creates an agent token with a unique name for support tools; returns its secret and name. */
export async function makeToken(tools: string[] = ["charge_card"], name?: string): Promise<{ secret: string; name: string; id: string }> {
  const prisma = await getPrisma();
  await addSupportTools();
  const tokenName = name ?? `agent-${process.pid}-${++tokenCounter}`;
  const { token, secret } = await createAgentToken(prisma, { name: tokenName, tools, createdBy: "admin@example.com" });
  return { secret, name: token.name, id: token.id };
}

/** How to call a route handler in a test. */
export interface CallOptions {
  /** HTTP method (default GET, or POST when a body is given). */
  method?: string;
  /** Bearer secret to send. */
  secret?: string;
  /** Raw header values (override the Authorization built from `secret`). */
  headers?: Record<string, string>;
  /** A JSON value (serialized) or a raw string body. */
  body?: unknown;
  /** Path parameters the route's folder would give. */
  params?: Record<string, string>;
}

/** The response of a call, with its JSON body. */
export interface CallResult {
  /** HTTP status. */
  status: number;
  /** Response headers. */
  headers: Headers;
  /** Parsed JSON body. */
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests read arbitrary fields
}

/** Calls `handler` like Next.js would, with `new Request(...)` and a params promise. */
export async function call(handler: RouteHandler, pathAndQuery: string, options: CallOptions = {}): Promise<CallResult> {
  const headers: Record<string, string> = {};
  if (options.secret) headers.authorization = `Bearer ${options.secret}`;
  if (options.body !== undefined) headers["content-type"] = "application/json";
  Object.assign(headers, options.headers);
  const body = options.body === undefined ? undefined : typeof options.body === "string" ? options.body : JSON.stringify(options.body);
  const request = new Request(`http://localhost${pathAndQuery}`, {
    method: options.method ?? (body === undefined ? "GET" : "POST"),
    headers,
    body,
  });
  const response = await handler(request, { params: Promise.resolve(options.params ?? {}) });
  const text = await response.text();
  return { status: response.status, headers: response.headers, json: text ? JSON.parse(text) : undefined };
}
