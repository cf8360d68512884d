/**
 * A real support agent for the browser tests: it runs in the test process and works through the
 * HTTP API of the server under test (HttpSagaStore) and the simulated systems that server hosts
 * (RemoteWorld), exactly as `npm run demo` does. The e2e database is opened only to mint the agent's
 * token and to fill the tool table; every saga write goes over HTTP, where the server enforces it.
 *
 * Specs import `test` and `expect` from here: the `agent` fixture is a freshly minted agent per test
 * (its own token name, so its runs are attributable) and `world` is the hosted world, whose ledger
 * is the oracle for what really happened outside Sagaboard. The ledger is shared by every test of the
 * run, so assertions always filter it by this test's own keys, refs or recipient.
 */
import { randomBytes } from "node:crypto";
import { HttpSagaStore } from "@/packages/client/src/agent/client/http-store";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import type { PrismaClient } from "@/lib/core/db/prisma";
import type { RunContext } from "@/packages/client/src/saga/run-context";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import type { ToolRegistry } from "@/packages/client/src/saga/tools";
import type { LedgerEntry, LedgerFilter } from "@/lib/demo/sim/ledger";
import { RemoteWorld, type WorldLike } from "@/lib/demo/sim/remote";
import { createAgentToken } from "@/lib/server/tokens/create-agent-token";
import { test as base, expect } from "./fixtures";
import { seedSupportToolTable } from "@/lib/demo/seed/support-tool-table";

/** An agent driving the API from the test process. */
export interface TestAgent {
  /** Its token's name, which the server records as each run's agent. */
  name: string;
  /** The saga store over HTTP, authenticated by the agent's token. */
  store: HttpSagaStore;
  /** The engine over that store and the hosted world's connectors. */
  engine: SagaEngine;
  /** The same agent with other connectors (e.g. a lookup that is down), over the same token. */
  engineWith: (world: WorldLike) => SagaEngine;
}

/** Fixtures of the specs that need an agent. */
export interface AgentFixtures {
  /** A new agent with its own token, scoped to every support tool. */
  agent: TestAgent;
  /** The simulated systems hosted by the server under test. */
  world: RemoteWorld;
}

/** A short tag nobody else uses, for run titles, recipients and names. */
export function uniqueTag(): string {
  return `${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
}

/** Engine tuning for tests: reconcile re-checks after the hosted world's 300 ms search lag, short backoff. */
const ENGINE_TUNING = { recheckAfterMs: 500, backoffMs: 50, maxAttempts: 3 } as const;

/**
 * The browser suite's agents report each outcome in its own request, before the call returns: the
 * specs look at the log and the pages right after a call. (The clients' default, an outcome sent with
 * the run's next call, is proved in tests/api/pipelined-calls.test.ts, and `npm start`'s demo runs it.)
 */
export const AGENT_STORE = { outcomeLingerMs: 0 } as const;

/**
 * Mints a new agent (its own token, scoped to every support tool) working through the API at
 * `baseUrl` with the connectors of `world`. The tool table is the server's authority on classes;
 * adding missing rows is idempotent.
 */
export async function createTestAgent(db: PrismaClient, baseUrl: string, world: WorldLike): Promise<TestAgent> {
  const registry: ToolRegistry = createSupportToolRegistry(world);
  await seedSupportToolTable(db, registry, "system:e2e");
  const name = `e2e-agent-${uniqueTag()}`;
  const { secret } = await createAgentToken(db, { name, tools: registry.list().map((t) => t.name), createdBy: "system:e2e" });
  const store = new HttpSagaStore({ baseUrl, token: secret, ...AGENT_STORE });
  const engineWith = (w: WorldLike) => new SagaEngine({ store, registry: createSupportToolRegistry(w), ...ENGINE_TUNING });
  return { name, store, engine: new SagaEngine({ store, registry, ...ENGINE_TUNING }), engineWith };
}

export const test = base.extend<AgentFixtures>({
  world: async ({ baseURL }, use) => {
    if (!baseURL) throw new Error("baseURL is not set; run the e2e tests through playwright.config.ts.");
    await use(new RemoteWorld(baseURL));
  },
  agent: async ({ db, world, baseURL }, use) => {
    if (!baseURL) throw new Error("baseURL is not set; run the e2e tests through playwright.config.ts.");
    await use(await createTestAgent(db, baseURL, world));
  },
});

export { expect };

/** A customer address only this test uses (so the ledger can be filtered by recipient). */
export function customerFor(tag: string): string {
  return `customer-${tag}@example.com`;
}

/** The effects in the hosted ledger matching `filter` (attempts that changed the world). */
export async function effects(world: RemoteWorld, filter: Omit<LedgerFilter, "outcome">, where?: (entry: LedgerEntry) => boolean): Promise<LedgerEntry[]> {
  const { entries } = await world.ledger({ ...filter, outcome: "effect" });
  return where ? entries.filter(where) : entries;
}

/** Whether a ledger entry's request was addressed to `to` (email sends and drafts). */
export function sentTo(to: string): (entry: LedgerEntry) => boolean {
  return (entry) => (entry.args as { to?: unknown } | null)?.to === to;
}

/** What `stageReship` staged: the external ids of the three reversible effects. */
export interface StagedReship {
  /** The ticket draft (`SUP-…`). */
  ticketId: string;
  /** The email draft (`drf_…`). */
  draftId: string;
  /** The authorisation hold (`pi_…`). */
  paymentIntentId: string;
  /** The amount held, minor units. */
  amount: number;
}

/** Stages a reship as the demo agent does: a ticket draft, an apology draft and a payment authorisation. */
export async function stageReship(run: RunContext, customer: string, tag: string): Promise<StagedReship> {
  const amount = 1800;
  const ref = (outcome: Awaited<ReturnType<RunContext["call"]>>, what: string): string => {
    if (outcome.status !== "ok" || !outcome.externalRef) throw new Error(`${what} should stage freely, got ${JSON.stringify(outcome)}`);
    return outcome.externalRef;
  };
  await run.call("search_orders", { orderId: "2001" });
  const ticketId = ref(await run.call("create_ticket_draft", { summary: `Reship order 2001 (${tag})`, orderId: "2001" }), "the ticket draft");
  const draftId = ref(
    await run.call("create_email_draft", { to: customer, subject: `Your replacement is on its way (${tag})`, body: "We re-shipped order 2001 and waived the fee." }),
    "the email draft",
  );
  const paymentIntentId = ref(await run.call("authorize_payment", { customerId: "cus_bo", amount, currency: "eur" }), "the authorisation");
  return { ticketId, draftId, paymentIntentId, amount };
}

/** A promise and its resolver, to hold the agent between two steps of the test. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}
