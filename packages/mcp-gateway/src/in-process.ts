/**
 * The gateway inside the agent's own process: for a team that cannot afford a second process hop,
 * `throughSagaboard` wraps the SDK client's transport to the real server and answers with a
 * transport the agent's `Client` connects to instead. Every tools/call then goes through the same
 * saga log, gate, holds, replay and settling as through the gateway process (the same code, over an
 * in-memory link); only what a process boundary gives is left out (client credentials, the state file
 * across restarts: a restarted agent process is a new session, and names the run in `_meta` to go on).
 *
 *   const transport = await throughSagaboard({ sagaboard: { baseUrl, token }, upstream: new StdioClientTransport({ command: "my-server" }), name: "my-server" });
 *   await client.connect(transport);
 */
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { TransportOptions } from "@sagaboard/client";
import { PassThrough } from "./passthrough";
import { connect, mcpServer, sessionGateway, type GatewayConfig } from "./start";

/** What the in-process gateway needs. */
export interface InProcessOptions {
  /** Sagaboard and the team's agent token (never the command line: it is this process's own value). */
  sagaboard: TransportOptions & { outcomeLingerMs?: number };
  /** The transport to the real server (not yet started: the gateway starts it). */
  upstream: Transport;
  /** The real server's name, for the run's title and the tool table's namespace key. */
  name: string;
  /** The owner the declaration proposes (default mcp). */
  owner?: string;
  /** Look tool T's effects up with the server's tool L({ key }). */
  lookupsByKey?: Record<string, string>;
  holdWaitMs?: number;
  callTimeoutMs?: number;
  cancelGraceMs?: number;
  tableCacheMs?: number;
  relistMs?: number;
  /** The run of this name (joined again by a restarted process); default a new run per connection. */
  session?: string | null;
}

/** Connects to the real server through the saga log; connect the agent's Client to the transport this answers. */
export async function throughSagaboard(options: InProcessOptions): Promise<Transport> {
  const config: GatewayConfig = {
    sagaboard: options.sagaboard,
    upstream: { transport: options.upstream, name: options.name },
    session: options.session ?? null,
    owner: options.owner ?? null,
    holdWaitMs: options.holdWaitMs,
    callTimeoutMs: options.callTimeoutMs,
    cancelGraceMs: options.cancelGraceMs,
    tableCacheMs: options.tableCacheMs,
    relistMs: options.relistMs ?? 0,
    lookupsByKey: options.lookupsByKey ?? {},
    listen: null,
    stateDir: null,
    crashAt: null,
  };
  const shared = await connect(config);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const session = sessionGateway(shared, "in-process");
  const server = mcpServer(shared, session, new PassThrough(shared.upstream.client));
  const closed = server.onclose;
  server.onclose = () => {
    closed?.();
    shared.catalog.stop();
    void session.end().finally(() => shared.upstream.client.close().catch(() => undefined));
  };
  await server.connect(serverSide);
  return clientSide;
}
