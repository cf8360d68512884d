/**
 * Starts the gateway: connects to the real server, lands its `tools/list` in Sagaboard's tool table
 * (declared into the token's namespace: new or changed tools are unreviewed, and every call of an
 * unreviewed tool is held), and serves MCP clients over stdio or streamable HTTP. Each client session
 * is a Sagaboard run, created on its first call (or the run a client names in `_meta`, or the run of
 * `--session NAME`, which a restarted gateway joins again); when the client ends the session cleanly,
 * the run it started is completed once its calls are settled. Resources, prompts, completions and the
 * logging level pass straight through (passthrough.ts).
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";
import type { TransportOptions } from "@/lib/agent/client/transport";
import type { TToolManifest } from "@/lib/protocol/manifest";
import { Gateway, RUN_META, localName, tableName, type CrashPoint } from "./gateway";
import { PassThrough } from "./passthrough";
import { startUndoWorker } from "./undo";
import { builtInLookups, lookupByKey, type Lookup } from "./lookups";
import { Sagaboard } from "./sagaboard";
import { connectUpstream, type Upstream, type UpstreamTarget } from "./upstream";

export interface GatewayConfig {
  /** `outcomeLingerMs`: how long a confirmed outcome may wait for the session's next call (0: recorded before the client is answered). */
  sagaboard: TransportOptions & { outcomeLingerMs?: number };
  upstream: UpstreamTarget;
  session: string | null;
  owner: string | null;
  holdWaitMs?: number;
  callTimeoutMs?: number;
  tableCacheMs?: number;
  lookupsByKey: Record<string, string>;
  /** A worker token for the namespace's tools: the gateway then runs the compensations a person asks for. */
  workerToken?: string | null;
  /** Serve streamable HTTP on 127.0.0.1:listen; null: stdio. */
  listen: number | null;
  crashAt: CrashPoint | null;
}

/** What the gateway suggests for an MCP tool: the strictest class until an admin reviews it. */
export function manifestFor(tools: Tool[], owner: string, lookups: Record<string, Lookup>): TToolManifest {
  return {
    tools: tools.map((tool) => {
      const hints = tool.annotations ? ` Server's hints (unverified): ${JSON.stringify(tool.annotations)}.` : "";
      return {
        name: localName(tool.name),
        class: "IRREVERSIBLE",
        description: `MCP tool ${tool.name}: ${tool.description ?? "no description"}`.slice(0, 480 - hints.length) + hints,
        argsSchema: tool.inputSchema as Record<string, unknown>,
        lookup: tool.name in lookups,
        owner,
        correction: {
          subject: `About an action an assistant took (${tool.name})`,
          body: `An automated assistant ran ${tool.name} on your behalf, and it should not have. Please disregard its effect; we are putting it right and will follow up.`,
        },
      };
    }),
    // Each tool may also answer another as its compensator: an admin pairs them in the tool table.
    compensators: tools.map((tool) => ({
      name: localName(tool.name),
      description: `MCP tool ${tool.name}, as a compensating call`.slice(0, 480),
      argsSchema: tool.inputSchema as Record<string, unknown>,
    })),
  };
}

/** How long a session that ends waits for its calls in flight to settle before it leaves its run open. */
const FINISH_WAIT_MS = 3_000;

/** Exits once `finishing` is done, or after 6 s whatever it is doing (an unreachable Sagaboard must not keep a stopped gateway alive). */
function exitAfter(finishing: Promise<unknown>): void {
  setTimeout(() => process.exit(0), FINISH_WAIT_MS + 3_000).unref();
  void finishing.finally(() => process.exit(0));
}

/** One client session's gateway: `forCall` creates its run on the first call; `end` finishes it. */
interface SessionGateway {
  forCall: (server: Server, runMeta: unknown) => Promise<Gateway>;
  /** The client's session ended cleanly: completes the run this session started (not a named or joined one). */
  end: () => Promise<void>;
}

/** The gateway for one client session; the run is created on the first call. */
function sessionGateway(config: GatewayConfig, sagaboard: Sagaboard, upstream: Upstream, tools: Tool[], namespace: string, lookups: Record<string, Lookup>): SessionGateway {
  let gateway: Promise<Gateway> | null = null;
  let joined = false;
  let ended: Promise<void> | null = null;
  const serverName = upstream.client.getServerVersion()?.name ?? "an MCP server";
  const forCall = (server: Server, runMeta: unknown): Promise<Gateway> => {
    gateway ??= (async () => {
      joined = typeof runMeta === "string";
      const client = server.getClientVersion();
      const run =
        typeof runMeta === "string"
          ? await sagaboard.getRun(runMeta)
          : await sagaboard.startRun(`MCP session: ${client?.name ?? "a client"} with ${serverName}`, config.session, {
              via: "mcp",
              upstream: serverName,
              client: client?.name ?? null,
              session: config.session,
            });
      const g = new Gateway({
        sagaboard,
        upstream,
        upstreamTools: tools,
        serverName: upstream.client.getServerVersion()?.name,
        namespace,
        runId: run.id,
        dashboardUrl: config.sagaboard.baseUrl.replace(/\/$/, ""),
        lookups,
        ...(config.holdWaitMs !== undefined ? { holdWaitMs: config.holdWaitMs } : {}),
        ...(config.callTimeoutMs !== undefined ? { callTimeoutMs: config.callTimeoutMs } : {}),
        ...(config.tableCacheMs !== undefined ? { tableCacheMs: config.tableCacheMs } : {}),
        crashAt: config.crashAt,
      });
      await g.load();
      process.stderr.write(`sagaboard-mcp-gateway: session run ${run.id} (${config.sagaboard.baseUrl.replace(/\/$/, "")}/runs/${run.id})\n`);
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
      process.stderr.write(`sagaboard-mcp-gateway: ${said}\n`);
    })());
  return { forCall, end };
}

/** How long a task handle lives when the client asks for none (a held call waits this long for a person). */
const TASK_TTL_MS = 60 * 60_000;

function mcpServer(session: SessionGateway, tools: Tool[], passThrough: PassThrough): Server {
  // Tasks (MCP 2025-11-25): a client may ask for a tools/call to run as a task and poll its handle;
  // the SDK answers tasks/get, tasks/result, tasks/list and tasks/cancel from this store.
  const server = new Server(
    { name: "sagaboard-mcp-gateway", version: "0.1.0" },
    { capabilities: { tools: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } }, ...passThrough.capabilities() }, taskStore: new InMemoryTaskStore() },
  );
  passThrough.attach(server);
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const meta = request.params._meta as Record<string, unknown> | undefined;
    const gateway = await session.forCall(server, meta?.[RUN_META]);
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

export async function startGateway(config: GatewayConfig): Promise<void> {
  const sagaboard = new Sagaboard(config.sagaboard);
  const upstream = await connectUpstream(config.upstream);
  const { tools } = await upstream.client.listTools();
  const lookups: Record<string, Lookup> = { ...builtInLookups(upstream.client.getServerVersion()?.name) };
  for (const [tool, lookupTool] of Object.entries(config.lookupsByKey)) lookups[tool] = lookupByKey(lookupTool);
  // The namespace is the token's name; the declaration says it (and lands new or changed tools unreviewed).
  const declared = await sagaboard.declare(manifestFor(tools, config.owner ?? "mcp", lookups));
  const waiting = declared.tools.filter((t) => t.status === "UNREVIEWED").map((t) => t.name);
  process.stderr.write(
    `sagaboard-mcp-gateway: ${tools.length} tools of ${upstream.client.getServerVersion()?.name ?? "the server"} in namespace ${declared.namespace}` +
      (waiting.length ? `; ${waiting.length} wait for an admin's review (their calls are held): ${config.sagaboard.baseUrl.replace(/\/$/, "")}/admin/tools\n` : "\n"),
  );

  if (config.workerToken) {
    startUndoWorker({
      sagaboard: { ...config.sagaboard, token: config.workerToken },
      client: upstream.client,
      serverName: upstream.client.getServerVersion()?.name,
      tools,
      namespace: declared.namespace,
      tableName: (name) => tableName(declared.namespace, name),
      lookups,
      workerId: `mcp-gateway-${declared.namespace}-${process.pid}`,
    });
  }

  const passThrough = new PassThrough(upstream.client);
  if (config.listen === null) {
    // stdio: the client ends the session by closing our stdin (then SIGTERM); the run is finished before we exit.
    const session = sessionGateway(config, sagaboard, upstream, tools, declared.namespace, lookups);
    const server = mcpServer(session, tools, passThrough);
    await server.connect(new StdioServerTransport());
    const exit = () => exitAfter(session.end());
    process.stdin.once("end", exit);
    process.once("SIGTERM", exit);
    process.once("SIGINT", exit);
    return;
  }
  // Streamable HTTP: one transport, MCP server and run per client session (Mcp-Session-Id).
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const live = new Set<SessionGateway>();
  const http = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    if (!req.url?.startsWith("/mcp")) {
      res.writeHead(404, { "content-type": "text/plain" }).end("The MCP endpoint is /mcp.\n");
      return;
    }
    const id = req.headers["mcp-session-id"];
    let transport = typeof id === "string" ? sessions.get(id) : undefined;
    if (!transport) {
      if (typeof id === "string") {
        res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found; initialize again." }, id: null }));
        return;
      }
      const session = sessionGateway(config, sagaboard, upstream, tools, declared.namespace, lookups);
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: true,
        onsessioninitialized: (sid) => {
          sessions.set(sid, created);
          live.add(session);
        },
      });
      await mcpServer(session, tools, passThrough).connect(created);
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
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => http.listen(config.listen!, "127.0.0.1", resolve));
  const stop = () => exitAfter(Promise.all([...live].map((session) => session.end())));
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  process.stderr.write(`sagaboard-mcp-gateway: MCP over streamable HTTP at http://127.0.0.1:${config.listen}/mcp\n`);
}
