/**
 * The hosted simulated world seen from another process (an agent, a worker): the same async methods
 * as the in-process sims, called over `POST /api/sim/rpc` on the Next.js server, plus the test
 * helpers (faults, ledger, reset, search lag) over their own `/api/sim/*` routes.
 *
 * Errors are what the in-process sims throw: a provider answer becomes the matching `ProviderError`
 * subclass, a `crash_after_effect` becomes `SimulatedCrash`. A failure of the HTTP call itself
 * (connection refused, reset, timeout) is thrown as it is: the outcome of that call is unknown.
 */
import type { CrmFields, CrmSim } from "./crm";
import type { EmailSim } from "./email";
import type { Fault, InjectOptions } from "./faults";
import type { LedgerEntry, LedgerFilter } from "./ledger";
import type { PaymentsSim } from "./payments";
import {
  decodeJson,
  encodeJson,
  RPC_METHODS,
  ZRpcResponse,
  rpcErrorToThrowable,
  SIM_SYSTEMS,
  type RpcMethod,
  type SimSystemName,
} from "./rpc";
import type { TicketingSim } from "./ticketing";
import type { WarehouseSim } from "./warehouse";
import type { World, WorldSummary } from "./world";

/** Stripe-like, over HTTP: the same signatures as the in-process sim. */
export type RemotePayments = Pick<PaymentsSim, RpcMethod<"payments">>;
/** Jira-like, over HTTP. */
export type RemoteTicketing = Pick<TicketingSim, RpcMethod<"ticketing">>;
/** Email API, over HTTP. */
export type RemoteEmail = Pick<EmailSim, RpcMethod<"email">>;
/** Warehouse API, over HTTP. */
export type RemoteWarehouse = Pick<WarehouseSim, RpcMethod<"warehouse">>;
/** CRM, over HTTP; `seed` (sync in-process) returns a promise here. */
export type RemoteCrm = Pick<CrmSim, Exclude<RpcMethod<"crm">, "seed">> & {
  /** Creates a record as test or demo setup (not logged). */
  seed(recordId: string, fields: CrmFields): Promise<void>;
};

/** The remote face of each system, by name. */
export interface RemoteSystems {
  payments: RemotePayments;
  ticketing: RemoteTicketing;
  email: RemoteEmail;
  warehouse: RemoteWarehouse;
  crm: RemoteCrm;
}

/**
 * What `World` and `RemoteWorld` both offer: every async method of every system, with identical
 * signatures, and `crm.seed` (sync in-process, async remotely: `await` it). Code that only calls
 * these (the tool connectors, the demo) can take either world.
 */
export interface WorldLike {
  payments: RemotePayments;
  ticketing: RemoteTicketing;
  email: RemoteEmail;
  warehouse: RemoteWarehouse;
  crm: Omit<RemoteCrm, "seed"> & {
    /** `await` it: it is async over HTTP. */
    seed(recordId: string, fields: CrmFields): void | Promise<void>;
  };
}

// Compile-time: the in-process World must keep satisfying WorldLike.
const _worldIsWorldLike: World extends WorldLike ? true : never = true;
void _worldIsWorldLike;

/** A fault injection option that can cross HTTP: no `when` predicate. */
export type RemoteInjectOptions = Omit<InjectOptions, "when">;

/** What `RemoteWorld.ledger()` returns. */
export interface RemoteLedger {
  /** The attempts matching the filter, in order, dates revived. */
  entries: LedgerEntry[];
  /** Counts over the whole ledger, as `World.summary()`. */
  summary: WorldSummary;
}

/** Options of a `RemoteWorld`. */
export interface RemoteWorldOptions {
  /** Per HTTP call (default 15 000 ms); on expiry the call throws the abort error, outcome unknown. */
  timeoutMs?: number;
  /** Replaces global `fetch` (tests route requests straight to the route handlers). */
  fetch?: typeof fetch;
  /** The demo's secret for the simulated systems (default: SAGABOARD_SIM_SECRET). */
  secret?: string;
}

/** An HTTP answer that is not a well-formed sim answer (404 while disabled, 400, 500, a proxy page). */
export class SimHttpError extends Error {
  constructor(
    /** HTTP status of the answer. */
    readonly status: number,
    /** The route's error code, when it gave one. */
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
    this.name = "SimHttpError";
  }
}

const DEFAULT_TIMEOUT_MS = 15_000;

/** The hosted simulated world, reached over HTTP at `baseUrl` (the Sagaboard server's origin). */
export class RemoteWorld implements WorldLike {
  /** Stripe-like. */
  readonly payments: RemotePayments;
  /** Jira-like. */
  readonly ticketing: RemoteTicketing;
  /** Email API. */
  readonly email: RemoteEmail;
  /** Warehouse API. */
  readonly warehouse: RemoteWarehouse;
  /** CRM. */
  readonly crm: RemoteCrm;
  /** Arms and disarms faults on the hosted world (by qualified op name, as `World.faults`). */
  readonly faults: {
    inject(op: string, fault: Fault, opts?: RemoteInjectOptions): Promise<void>;
    clear(): Promise<void>;
    /** Faults still armed (for `op`, or in total); `Infinity` for an until-cleared fault. */
    pending(op?: string): Promise<number>;
  };

  private readonly base: string;
  private readonly timeoutMs: number;
  private readonly fetchFn: typeof fetch;
  private readonly secretHeaders: Record<string, string>;

  constructor(baseUrl: string, opts: RemoteWorldOptions = {}) {
    this.base = baseUrl.replace(/\/+$/, "");
    const secret = opts.secret ?? process.env.SAGABOARD_SIM_SECRET;
    this.secretHeaders = secret ? { "x-sagaboard-sim-secret": secret } : {};
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.fetchFn = opts.fetch ?? ((input, init) => fetch(input, init));
    this.payments = this.system("payments");
    this.ticketing = this.system("ticketing");
    this.email = this.system("email");
    this.warehouse = this.system("warehouse");
    this.crm = this.system("crm");
    this.faults = {
      inject: async (op, fault, injectOpts = {}) => {
        if ("when" in injectOpts) throw new TypeError("a fault's `when` predicate cannot be sent over HTTP");
        const times = injectOpts.times === Infinity ? "infinite" : injectOpts.times;
        await this.request("POST", "/api/sim/faults", { op, fault, times });
      },
      clear: async () => {
        await this.request("DELETE", "/api/sim/faults");
      },
      pending: async (op) => {
        const query = op === undefined ? "" : `?op=${encodeURIComponent(op)}`;
        const body = (await this.request("GET", `/api/sim/faults${query}`)) as { pending?: unknown };
        return body.pending === "infinite" ? Infinity : Number(body.pending);
      },
    };
  }

  /** The hosted ledger (every attempt matching `filter`, dates revived) and the world's summary. */
  async ledger(filter: LedgerFilter = {}): Promise<RemoteLedger> {
    const params = new URLSearchParams();
    for (const [field, value] of Object.entries(filter)) if (typeof value === "string") params.set(field, value);
    const query = params.size > 0 ? `?${params.toString()}` : "";
    return decodeJson(await this.request("GET", `/api/sim/ledger${query}`)) as RemoteLedger;
  }

  /** Replaces the hosted world with a fresh one (empty ledger, no faults, seeded CRM records). */
  async reset(opts: { searchLagMs?: number } = {}): Promise<void> {
    await this.request("POST", "/api/sim/reset", opts);
  }

  /** Sets the search lag of every hosted system. */
  async setSearchLag(ms: number): Promise<void> {
    await this.request("POST", "/api/sim/search-lag", { ms });
  }

  private system<S extends SimSystemName>(system: S): RemoteSystems[S] {
    if (!SIM_SYSTEMS.includes(system)) throw new TypeError(`unknown system ${system}`);
    const methods: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
    for (const method of RPC_METHODS[system] as readonly string[]) {
      methods[method] = (...args: unknown[]) => this.call(system, method, args);
    }
    return methods as unknown as RemoteSystems[S];
  }

  /** One RPC: the value, or the error the in-process sim would have thrown. */
  private async call(system: SimSystemName, method: string, args: unknown[]): Promise<unknown> {
    // Trailing undefined arguments are omitted, so parameter defaults apply on the server.
    let n = args.length;
    while (n > 0 && args[n - 1] === undefined) n--;
    const body = await this.request("POST", "/api/sim/rpc", { system, method, args: encodeJson(args.slice(0, n)) });
    const parsed = ZRpcResponse.safeParse(body);
    if (!parsed.success) throw new SimHttpError(200, undefined, `malformed answer from ${system}.${method}`);
    if (!parsed.data.ok) throw rpcErrorToThrowable(parsed.data.error);
    return decodeJson(parsed.data.value);
  }

  /** One HTTP exchange; transport failures propagate untouched, non-2xx answers become SimHttpError. */
  private async request(method: "GET" | "POST" | "DELETE", path: string, body?: unknown): Promise<unknown> {
    const response = await this.fetchFn(`${this.base}${path}`, {
      method,
      headers: { ...this.secretHeaders, ...(body === undefined ? { accept: "application/json" } : { accept: "application/json", "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: "no-store",
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    const text = await response.text();
    let json: unknown;
    try {
      json = text === "" ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (!response.ok || json === undefined) {
      const error = (json as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
      const code = typeof error?.code === "string" ? error.code : undefined;
      const detail = typeof error?.message === "string" ? error.message : text.slice(0, 200) || response.statusText;
      throw new SimHttpError(response.status, code, `${method} ${path}: HTTP ${response.status}: ${detail}`);
    }
    return json;
  }
}
