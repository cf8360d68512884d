/**
 * Starts the gateway: connects to the real server, lands its `tools/list` in Sagaboard's tool table
 * (declared into the token's namespace: new or changed tools are unreviewed, and every call of an
 * unreviewed tool is held) and keeps watching it (tool-watch.ts), and serves MCP clients over stdio
 * or streamable HTTP. Over HTTP only the gateway's own clients get in (client-auth.ts). Each client
 * session is a Sagaboard run: created on its first call, or the one this client was in when the
 * gateway stopped (run-state.ts), or the run of `--session NAME`; a session may join a run it names
 * in `_meta` only if that run is its own client's. When the client ends the session cleanly, the run
 * it started is completed once its calls are settled. Resources, prompts, completions and the logging
 * level pass straight through (passthrough.ts).
 */
import { createHash, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js";
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Json, RunRecord, TransportOptions } from "@sagaboard/client";
import { admit, loadClientTokens, MAX_BODY_BYTES, refusalBody, type RequestPolicy } from "./client-auth";
import { Gateway, RUN_META, tableName, type CrashPoint } from "./gateway";
import { PassThrough } from "./passthrough";
import { RunState } from "./run-state";
import { startUndoWorker } from "./undo";
import { builtInLookups, lookupByKey, type Lookup } from "./lookups";
import { Sagaboard, type TableTool } from "./sagaboard";
import { ToolCatalog } from "./tool-watch";
import { connectUpstream, type Upstream, type UpstreamTarget } from "./upstream";

export { manifestFor } from "./tool-watch";

export interface GatewayConfig {
  /** `outcomeLingerMs`: how long a confirmed outcome may wait for the session's next call (0: recorded before the client is answered). */
  sagaboard: TransportOptions & { outcomeLingerMs?: number };
  upstream: UpstreamTarget;
  session: string | null;
  owner: string | null;
  holdWaitMs?: number | undefined;
  callTimeoutMs?: number | undefined;
  /** After a client cancels or gives up, how long the server's call stays open for its answer (default 5 min). */
  cancelGraceMs?: number | undefined;
  tableCacheMs?: number | undefined;
  /** Re-list the server's tools every N ms when it does not notify (default 30 s; 0: only on notification). */
  relistMs?: number | undefined;
  lookupsByKey: Record<string, string>;
  /** A worker token for the namespace's tools: the gateway then runs the compensations a person asks for. */
  workerToken?: string | null;
  /** Serve streamable HTTP on 127.0.0.1:listen; null: stdio. */
  listen: number | null;
  /** HTTP: the clients' bearer tokens (NAME:SECRET lines); written with a new secret when missing. */
  clientTokenFile?: string;
  /** HTTP: browser origins allowed besides this machine's. */
  allowOrigins?: string[];
  /** HTTP: Host headers allowed besides localhost, 127.0.0.1 and [::1]. */
  allowHosts?: string[];
  /** Where each client's open runs are remembered across restarts; null: not remembered. */
  stateDir?: string | null;
  crashAt: CrashPoint | null;
}

/** How long a session that ends waits for its calls in flight to settle before it leaves its run open. */
const FINISH_WAIT_MS = 3_000;

/** Run states a session may still take calls in. */
const OPEN_RUN = ["RUNNING", "AWAITING_PIVOT", "COMMITTING"];

/** Exits once `finishing` is done, or after 6 s whatever it is doing (an unreachable Sagaboard must not keep a stopped gateway alive). */
function exitAfter(finishing: Promise<unknown>): void {
  setTimeout(() => process.exit(0), FINISH_WAIT_MS + 3_000).unref();
  void finishing.finally(() => process.exit(0));
}

const log = (line: string) => process.stderr.write(`sagaboard-mcp-gateway: ${line}\n`);

/** What every session of one gateway shares. */
export interface Shared {
  config: GatewayConfig;
  sagaboard: Sagaboard;
  upstream: Upstream;
  catalog: ToolCatalog;
  lookups: Record<string, Lookup>;
  state: RunState | null;
  serverName: string;
}

/** A client session asked to join a run that is not its client's: refused, with what it may do. */
class JoinRefused extends Error {}

/** One client session's gateway: `forCall` finds or creates its run on the first call; `end` finishes it. */
export interface SessionGateway {
  forCall: (server: Server, runMeta: unknown) => Promise<Gateway>;
  /** The client's session ended cleanly: completes the run this session started (not a named or joined one). */
  end: () => Promise<void>;
}

/** The key a run records of the client that started it, so only that client may join it later. */
function clientKey(shared: Shared, client: string): string {
  const up = shared.config.upstream;
  const target = "transport" in up ? up.name : "url" in up ? up.url : [up.command, ...up.args].join(" ");
  return createHash("sha256").update(`${shared.catalog.namespace}\u0000${target}\u0000${client}`).digest("hex").slice(0, 32);
}

/** The gateway for one client session (`client`: the name of its credential; "stdio" over stdio). */
export function sessionGateway(shared: Shared, client: string): SessionGateway {
  const { config, sagaboard, upstream } = shared;
  let gateway: Promise<Gateway> | null = null;
  let joined = false;
  let remembered: string | null = null;
  let ended: Promise<void> | null = null;
  const key = clientKey(shared, client);

  /** A run named in `_meta`: only this client's (started by it, or remembered for it), or the named session's. */
  async function join(runId: string): Promise<RunRecord> {
    const run = await sagaboard.getRun(runId);
    const meta = (run.metadata ?? {}) as { mcpClient?: unknown; session?: unknown };
    const own = meta.mcpClient === key || shared.state?.belongsTo(client, runId) === true || (config.session !== null && meta.session === config.session);
    if (!own) throw new JoinRefused(`run ${runId} was not started by this client; a session joins only its own client's runs (or the run of the gateway's --session).`);
    return run;
  }

  /** The run this client was in when the gateway stopped (and still open), or a new one it remembers. */
  async function resumeOrStart(title: string, metadata: Json): Promise<{ run: RunRecord; resumed: boolean }> {
    for (const runId of shared.state?.untaken(client) ?? []) {
      shared.state?.take(client, runId);
      const run = await sagaboard.getRun(runId).catch(() => null);
      if (run && OPEN_RUN.includes(run.status)) return { run, resumed: true };
      shared.state?.release(runId, true); // finished or gone: nothing to resume
    }
    const run = await sagaboard.startRun(title, null, metadata);
    shared.state?.take(client, run.id);
    return { run, resumed: false };
  }

  const forCall = (server: Server, runMeta: unknown): Promise<Gateway> => {
    gateway ??= (async () => {
      const info = server.getClientVersion();
      const title = `MCP session: ${info?.name ?? "a client"} with ${shared.serverName}`;
      const metadata: Json = { via: "mcp", upstream: shared.serverName, client: info?.name ?? null, session: config.session, mcpClient: key };
      let run: RunRecord;
      let resumed = false;
      if (typeof runMeta === "string") {
        run = await join(runMeta);
        joined = true;
      } else if (config.session !== null) {
        run = await sagaboard.startRun(title, config.session, metadata);
      } else {
        ({ run, resumed } = await resumeOrStart(title, metadata));
        remembered = run.id;
      }
      const g = new Gateway({
        sagaboard,
        upstream,
        tools: shared.catalog,
        serverName: shared.serverName,
        namespace: shared.catalog.namespace,
        runId: run.id,
        dashboardUrl: config.sagaboard.baseUrl.replace(/\/$/, ""),
        lookups: shared.lookups,
        ...(config.holdWaitMs !== undefined ? { holdWaitMs: config.holdWaitMs } : {}),
        ...(config.callTimeoutMs !== undefined ? { callTimeoutMs: config.callTimeoutMs } : {}),
        ...(config.cancelGraceMs !== undefined ? { cancelGraceMs: config.cancelGraceMs } : {}),
        ...(config.tableCacheMs !== undefined ? { tableCacheMs: config.tableCacheMs } : {}),
        crashAt: config.crashAt,
      });
      await g.load();
      // A run this client was in before a restart: whatever was in flight is settled by key before anything is forwarded.
      const settled = resumed || joined || config.session !== null ? await g.settleInFlight() : 0;
      log(`session run ${run.id}${resumed ? " (resumed after a restart)" : ""}${settled ? `, ${settled} call(s) in flight settled first` : ""} (${config.sagaboard.baseUrl.replace(/\/$/, "")}/runs/${run.id})`);
      return g;
    })();
    gateway.catch(() => (gateway = null));
    return gateway;
  };
  // A named session's run is left open for the next gateway of that name; a joined run is its starter's to finish.
  const end = () =>
    (ended ??= (async () => {
      if (!gateway || config.session !== null) return;
      const g = await gateway.catch(() => null);
      if (!g || joined) return;
      const said = await g.finish(FINISH_WAIT_MS).catch((e: Error) => `run ${g.runId} stays RUNNING: ${e.message}`);
      if (remembered) shared.state?.release(remembered, said.includes("completed"));
      log(said);
    })());
  return { forCall, end };
}

/** How long a task handle lives when the client asks for none (a held call waits this long for a person). */
const TASK_TTL_MS = 60 * 60_000;

/** What a client reads of a tool: the server's definition, with the reviewed class as its annotations. */
function asReviewed(tool: Tool, row: TableTool | undefined): Tool {
  const cls = row?.toolClass ?? "IRREVERSIBLE";
  const reviewed = row?.status === "REVIEWED";
  return {
    ...tool,
    annotations: {
      ...(tool.annotations?.title ? { title: tool.annotations.title } : {}),
      readOnlyHint: cls === "PURE",
      destructiveHint: cls === "IRREVERSIBLE" || cls === "COMPENSATABLE",
      // Through the gateway a re-sent call is answered from the log, whatever the server does.
      idempotentHint: cls !== "PURE" || tool.annotations?.idempotentHint === true,
      openWorldHint: tool.annotations?.openWorldHint ?? true,
    },
    _meta: {
      ...tool._meta,
      "dev.sagaboard/class": cls,
      "dev.sagaboard/status": row?.status ?? "UNREVIEWED",
      "dev.sagaboard/reviewed": reviewed,
      ...(tool.annotations ? { "dev.sagaboard/serverHints": tool.annotations } : {}),
    },
  };
}

export function mcpServer(shared: Shared, session: SessionGateway, passThrough: PassThrough): Server {
  // Tasks (MCP 2025-11-25): a client may ask for a tools/call to run as a task and poll its handle;
  // the SDK answers tasks/get, tasks/result, tasks/list and tasks/cancel from this store.
  const server = new Server(
    { name: "sagaboard-mcp-gateway", version: "0.1.0" },
    { capabilities: { tools: { listChanged: true }, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } }, ...passThrough.capabilities() }, taskStore: new InMemoryTaskStore() },
  );
  passThrough.attach(server);
  shared.catalog.attach(server);
  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const table = new Map((await shared.sagaboard.tools().catch(() => [] as TableTool[])).map((t) => [t.name, t] as const));
    return { tools: shared.catalog.tools().map((t) => asReviewed(t, table.get(tableName(shared.catalog.namespace, t.name)))) };
  });
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    // A tool the server does not list is refused before a run is looked for: nothing is logged for it.
    if (!shared.catalog.tool(request.params.name)) {
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${request.params.name}: the server behind this gateway lists ${shared.catalog.tools().map((t) => t.name).join(", ") || "no tools"}.`);
    }
    const meta = request.params._meta as Record<string, unknown> | undefined;
    let gateway: Gateway;
    try {
      gateway = await session.forCall(server, meta?.[RUN_META]);
    } catch (e) {
      if (!(e instanceof JoinRefused)) throw e;
      return { content: [{ type: "text", text: `Refused: ${e.message} Nothing was sent.` }], isError: true, _meta: { "dev.sagaboard/error": "RUN_NOT_YOURS" } };
    }
    const store = extra.taskStore;
    // Only a request that carries `task` asked for one (the SDK's isTaskAugmentedRequestParams accepts any params).
    if (request.params.task === undefined || !store) return gateway.call(request.params.name, request.params.arguments, meta, extra.signal);
    const ttl = extra.taskRequestedTtl ?? TASK_TTL_MS;
    const task = await store.createTask({ ttl, pollInterval: 1000 });
    const cancelled = new AbortController();
    void (async () => {
      const stillWanted = async () => {
        const now = await store.getTask(task.taskId).catch(() => null);
        if (!now || now.status === "cancelled") cancelled.abort();
        return !cancelled.signal.aborted;
      };
      const status = async (message: string) => {
        if (await stillWanted()) await store.updateTaskStatus(task.taskId, "working", message.slice(0, 1000));
      };
      const result = await gateway
        .callAsTask(request.params.name, request.params.arguments, meta, { signal: cancelled.signal, until: Date.now() + ttl, status, stillWanted })
        .catch((e: Error) => ({ content: [{ type: "text", text: `The gateway could not finish ${request.params.name}: ${e.message}. Call it again with the same arguments; it will not run twice.` }], isError: true }));
      if (cancelled.signal.aborted) return;
      await store.storeTaskResult(task.taskId, result.isError ? "failed" : "completed", result).catch(() => undefined);
    })();
    return { task };
  });
  return server;
}

/** Connects to the real server, declares its tools and starts watching them: what every session shares. */
export async function connect(config: GatewayConfig): Promise<Shared> {
  const sagaboard = new Sagaboard(config.sagaboard);
  const upstream = await connectUpstream(config.upstream);
  const serverName = upstream.client.getServerVersion()?.name ?? "an MCP server";
  const lookups: Record<string, Lookup> = { ...builtInLookups(upstream.client.getServerVersion()?.name) };
  for (const [tool, lookupTool] of Object.entries(config.lookupsByKey)) lookups[tool] = lookupByKey(lookupTool);
  // The namespace is the token's name; the declaration says it (and lands new or changed tools unreviewed).
  const catalog = new ToolCatalog({
    client: upstream.client,
    owner: config.owner ?? "mcp",
    lookups,
    declare: (manifest) => sagaboard.declare(manifest),
    relistMs: config.relistMs ?? 30_000,
    onChange: (changed) => log(`the server's tools changed (${changed.join(", ")}): declared again; changed ones are held until an admin reviews them, and clients were told.`),
  });
  await catalog.start();
  log(
    `${catalog.tools().length} tools of ${serverName} in namespace ${catalog.namespace}` +
      (catalog.waiting.length ? `; ${catalog.waiting.length} wait for an admin's review (their calls are held): ${config.sagaboard.baseUrl.replace(/\/$/, "")}/admin/tools` : ""),
  );
  const state = config.stateDir ? new RunState(config.stateDir, catalog.namespace, config.upstream) : null;
  return { config, sagaboard, upstream, catalog, lookups, state, serverName };
}

/** Reads a request's body, keeping at most MAX_BODY_BYTES; null when it is larger (the rest is read and dropped, so the answer reaches the client). */
function readBody(req: IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on("end", () => resolve(size > MAX_BODY_BYTES ? null : Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

/** Answers a refusal with its JSON-RPC error; an unread body is drained first, so the client hears the answer. */
function refuse(req: IncomingMessage, res: ServerResponse, status: number, message: string): void {
  const answer = () => {
    if (!res.headersSent) res.writeHead(status, { "content-type": "application/json", ...(status === 401 ? { "www-authenticate": 'Bearer realm="sagaboard-mcp-gateway"' } : {}) }).end(refusalBody(message, status));
  };
  if (req.complete || req.readableEnded) return answer();
  req.on("end", answer);
  req.on("error", answer);
  req.resume();
}

export async function startGateway(config: GatewayConfig): Promise<void> {
  const shared = await connect(config);
  const { catalog } = shared;
  if (config.workerToken) {
    startUndoWorker({
      sagaboard: { ...config.sagaboard, token: config.workerToken },
      client: shared.upstream.client,
      serverName: shared.upstream.client.getServerVersion()?.name,
      tools: catalog.tools(),
      namespace: catalog.namespace,
      tableName: (name) => tableName(catalog.namespace, name),
      lookups: shared.lookups,
      workerId: `mcp-gateway-${catalog.namespace}-${process.pid}`,
    });
  }

  const passThrough = new PassThrough(shared.upstream.client);
  if (config.listen === null) {
    // stdio: the parent process is the client; it ends the session by closing our stdin (then SIGTERM).
    const session = sessionGateway(shared, "stdio");
    const server = mcpServer(shared, session, passThrough);
    await server.connect(new StdioServerTransport());
    const exit = () => exitAfter(session.end());
    process.stdin.once("end", exit);
    process.once("SIGTERM", exit);
    process.once("SIGINT", exit);
    return;
  }
  // Streamable HTTP: only the gateway's clients; one transport, MCP server and run per client session (Mcp-Session-Id).
  const tokens = loadClientTokens(config.clientTokenFile ?? "client-tokens");
  if (tokens.created) log(`wrote a client token to ${tokens.file} (mode 600): give it to the MCP client as "Authorization: Bearer <secret>".`);
  for (const warning of tokens.warnings) log(warning);
  const policy: RequestPolicy = { tokens, port: config.listen, allowOrigins: config.allowOrigins ?? [], allowHosts: config.allowHosts ?? [] };
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; client: string }>();
  const live = new Set<SessionGateway>();
  const http = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    if (!req.url?.startsWith("/mcp")) {
      res.writeHead(404, { "content-type": "text/plain" }).end("The MCP endpoint is /mcp.\n");
      return;
    }
    const admission = admit(req, policy);
    if (!admission.ok) return refuse(req, res, admission.status, admission.message);
    let body: unknown;
    if (req.method === "POST") {
      const raw = await readBody(req);
      if (raw === null) return refuse(req, res, 413, `The request body is larger than ${MAX_BODY_BYTES} bytes.`);
      try {
        body = JSON.parse(raw.toString("utf8"));
      } catch {
        res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32700, message: "Parse error: the body is not JSON." }, id: null }));
        return;
      }
    }
    const id = req.headers["mcp-session-id"];
    const known = typeof id === "string" ? sessions.get(id) : undefined;
    if (known && known.client !== admission.client) return refuse(req, res, 403, "This MCP session belongs to another client of the gateway; initialize your own.");
    let transport = known?.transport;
    if (!transport) {
      if (typeof id === "string") {
        res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found; initialize again." }, id: null }));
        return;
      }
      const session = sessionGateway(shared, admission.client);
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: true,
        onsessioninitialized: (sid) => {
          sessions.set(sid, { transport: created, client: admission.client });
          live.add(session);
        },
      });
      await mcpServer(shared, session, passThrough).connect(created);
      // The client's DELETE (or the transport closing) ends the session: its run is finished.
      const closed = created.onclose;
      created.onclose = () => {
        closed?.();
        if (created.sessionId) sessions.delete(created.sessionId);
        live.delete(session);
        void session.end();
      };
      transport = created;
    }
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((resolve) => http.listen(config.listen!, "127.0.0.1", resolve));
  const stop = () => exitAfter(Promise.all([...live].map((session) => session.end())));
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  log(`MCP over streamable HTTP at http://127.0.0.1:${config.listen}/mcp (clients authenticate with a token from ${tokens.file})`);
}
