#!/usr/bin/env node
/**
 * sagaboard-mcp-gateway: point an MCP client at this command instead of the real server.
 *
 *   sagaboard-mcp-gateway --url http://localhost:3000 --token sgb_... -- npx -y @modelcontextprotocol/server-memory
 *
 * Options (each also read from the environment):
 *   --url URL              Sagaboard's base URL (SAGABOARD_URL)
 *   --token TOKEN          a team's agent token; its name is the namespace the tools land in (SAGABOARD_TOKEN)
 *   --upstream-url URL     the real server over streamable HTTP, instead of a command after `--`
 *   --listen PORT          serve the client over streamable HTTP on 127.0.0.1:PORT instead of stdio
 *   --session NAME         join the run of this session name (a restart resumes it); default: a new run
 *   --owner TEAM           the team whose queue gets the tools' held calls (default: mcp)
 *   --hold-wait-ms N       how long a held call waits for a reviewer before answering "held" (20000)
 *   --call-timeout-ms N    how long a call may take before its outcome is recorded unknown (60000)
 *   --lookup-by-key T=L    look tool T's effects up with the server's tool L({ key }) (repeatable)
 *   --worker-token TOKEN   a worker token for the namespace: the gateway runs the compensations a person asks for
 *   --table-cache-ms N     how long the tool table's classes are trusted before they are read again (5000)
 *   --outcome-linger-ms N  let a confirmed call's outcome go to Sagaboard with the session's next call, waiting
 *                          at most N ms (one request per call instead of two); 0, the default, records it
 *                          before the client is answered
 */
import { parseArgs } from "node:util";
import { CRASH_POINTS, type CrashPoint } from "./gateway";
import { startGateway, type GatewayConfig } from "./start";

function fail(message: string): never {
  process.stderr.write(`sagaboard-mcp-gateway: ${message}\n`);
  process.exit(2);
}

const dash = process.argv.indexOf("--");
const own = dash === -1 ? process.argv.slice(2) : process.argv.slice(2, dash);
const upstreamCommand = dash === -1 ? [] : process.argv.slice(dash + 1);
const { values } = parseArgs({
  args: own,
  options: {
    url: { type: "string" },
    token: { type: "string" },
    "upstream-url": { type: "string" },
    listen: { type: "string" },
    session: { type: "string" },
    owner: { type: "string" },
    "hold-wait-ms": { type: "string" },
    "call-timeout-ms": { type: "string" },
    "lookup-by-key": { type: "string", multiple: true },
    "table-cache-ms": { type: "string" },
    "worker-token": { type: "string" },
    "outcome-linger-ms": { type: "string" },
  },
  strict: true,
});

const number = (name: string, value: string | undefined): number | undefined => {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) fail(`--${name} must be a whole number of milliseconds, not "${value}".`);
  return n;
};

/** The test-only crash point; a name outside the list is refused rather than ignored. */
function crashPoint(value: string | undefined): CrashPoint | null {
  if (!value) return null;
  if (!(CRASH_POINTS as readonly string[]).includes(value)) fail(`SAGABOARD_MCP_CRASH_AT must be one of ${CRASH_POINTS.join(", ")}, not "${value}".`);
  return value as CrashPoint;
}

const url = values.url ?? process.env.SAGABOARD_URL;
const token = values.token ?? process.env.SAGABOARD_TOKEN;
if (!url) fail("say where Sagaboard is: --url http://localhost:3000 (or SAGABOARD_URL).");
if (!token) fail("give a team's agent token: --token sgb_... (or SAGABOARD_TOKEN); an admin makes one with `npm run token -- create --name <team>`.");
if (!values["upstream-url"] && upstreamCommand.length === 0) fail("name the real server: its command after `--` (e.g. -- npx -y @modelcontextprotocol/server-memory) or --upstream-url.");
const lookupsByKey: Record<string, string> = {};
for (const pair of values["lookup-by-key"] ?? []) {
  const [tool, lookup] = pair.split("=");
  if (!tool || !lookup) fail(`--lookup-by-key takes TOOL=LOOKUP_TOOL, not "${pair}".`);
  lookupsByKey[tool] = lookup;
}
const listen = number("listen", values.listen);

const config: GatewayConfig = {
  sagaboard: { baseUrl: url, token, outcomeLingerMs: number("outcome-linger-ms", values["outcome-linger-ms"]) ?? 0 },
  upstream: values["upstream-url"] ? { url: values["upstream-url"] } : { command: upstreamCommand[0]!, args: upstreamCommand.slice(1) },
  session: values.session ?? process.env.SAGABOARD_MCP_SESSION ?? null,
  owner: values.owner ?? null,
  holdWaitMs: number("hold-wait-ms", values["hold-wait-ms"]),
  callTimeoutMs: number("call-timeout-ms", values["call-timeout-ms"]),
  tableCacheMs: number("table-cache-ms", values["table-cache-ms"]),
  workerToken: values["worker-token"] ?? process.env.SAGABOARD_WORKER_TOKEN ?? null,
  lookupsByKey,
  listen: listen ?? null,
  crashAt: crashPoint(process.env.SAGABOARD_MCP_CRASH_AT),
};

startGateway(config).catch((e: unknown) => fail(e instanceof Error ? e.message : String(e)));
