/**
 * The gateway's command line: what each option means (the usage `--help` prints), and the config it
 * makes. Secrets are read from the environment or a file, never required on the command line (where
 * every local user can read them in the process list); a bad option is a sentence that says what to
 * write instead. Pure: nothing here starts anything.
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { CRASH_POINTS, type CrashPoint } from "./gateway";
import type { GatewayConfig } from "./start";

export const USAGE = `sagaboard-mcp-gateway: point an MCP client at this command instead of the real MCP server; every
side-effecting tools/call goes through Sagaboard's saga log first.

Usage:
  sagaboard-mcp-gateway --url URL [options] -- COMMAND [ARGS...]      (the real server over stdio)
  sagaboard-mcp-gateway --url URL [options] --upstream-url URL        (the real server over streamable HTTP)

Sagaboard:
  --url URL                Sagaboard's base URL (or SAGABOARD_URL)
  --token-file FILE        a file holding the team's agent token; or put the token in SAGABOARD_TOKEN.
                           Its name is the namespace the tools land in. (--token TOKEN works too, but
                           every local user can read it in the process list.)
  --worker-token-file FILE a worker token for the namespace (or SAGABOARD_WORKER_TOKEN): the gateway then
                           runs the compensations a person asks for
  --owner TEAM             the owner the declaration proposes for the tools (default: mcp); an admin decides

The real server:
  --upstream-url URL       the real server over streamable HTTP, instead of a command after --
  --pass-env NAME          pass this variable of the gateway's environment to the server's command
                           (repeatable). By default it gets only HOME, LOGNAME, PATH, SHELL, TERM and USER;
                           Sagaboard's tokens are never passed.
  --lookup-by-key T=L      look tool T's effects up with the server's tool L({ key }) (repeatable)
  --relist-ms N            re-list the server's tools every N ms when it does not send list_changed
                           (default 30000; 0: only on list_changed)

Clients:
  --listen PORT            serve clients over streamable HTTP at http://127.0.0.1:PORT/mcp instead of stdio
  --client-token-file FILE HTTP: the bearer tokens clients must send, one per line as NAME:SECRET (a line
                           with no name is the client "default"). When FILE does not exist the gateway
                           writes one with a new secret (mode 600) and prints where.
                           Default: <state-dir>/client-tokens
  --allow-origin ORIGIN    HTTP: a browser origin allowed besides this machine's (repeatable)
  --allow-host HOST        HTTP: a Host header allowed besides localhost, 127.0.0.1 and [::1] (repeatable)
  --session NAME           join the run of this name (a restart resumes it); default: each client's own run,
                           which a restarted gateway finds again in the state directory
  --state-dir DIR          where the gateway remembers each client's run across restarts
                           (default: $SAGABOARD_MCP_STATE_DIR or ~/.sagaboard/mcp-gateway)

Calls:
  --hold-wait-ms N         how long a held call waits for a reviewer before answering "held" (20000)
  --call-timeout-ms N      how long a call may take before its outcome is recorded unknown (60000)
  --cancel-grace-ms N      after a client cancels or gives up, keep the server's call open this long for its
                           answer before cancelling it there (default 300000; 0: cancel at once)
  --table-cache-ms N       how long the tool table's classes are trusted before they are read again (5000)
  --outcome-linger-ms N    let a confirmed call's outcome go with the session's next call, waiting at most
                           N ms (one request a call instead of two); 0, the default, records it before the
                           client is answered

  --help                   this text
`;

/** A command line the gateway cannot start with: the sentence says what to write instead. */
export class UsageError extends Error {}

/** What the command line asks for, or that the usage was asked for. */
export type ParsedCommandLine = { help: true } | { help: false; config: GatewayConfig; warnings: string[] };

/** The default state directory. */
export function defaultStateDir(env: Readonly<Record<string, string | undefined>>): string {
  return env.SAGABOARD_MCP_STATE_DIR ?? path.join(homedir(), ".sagaboard", "mcp-gateway");
}

function readSecretFile(file: string, what: string): string {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw new UsageError(`cannot read ${what} from ${file}: ${(e as Error).message}`);
  }
  const secret = text.trim();
  if (!secret) throw new UsageError(`${file} is empty; it must hold ${what}.`);
  return secret;
}

/** Parses the gateway's arguments (before and after `--`) and environment into its config. */
export function parseCommandLine(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): ParsedCommandLine {
  const dash = argv.indexOf("--");
  const own = dash === -1 ? [...argv] : argv.slice(0, dash);
  const upstreamCommand = dash === -1 ? [] : argv.slice(dash + 1);
  let values;
  try {
    ({ values } = parseArgs({
      args: own,
      options: {
        help: { type: "boolean", short: "h" },
        url: { type: "string" },
        token: { type: "string" },
        "token-file": { type: "string" },
        "worker-token": { type: "string" },
        "worker-token-file": { type: "string" },
        "upstream-url": { type: "string" },
        "pass-env": { type: "string", multiple: true },
        listen: { type: "string" },
        "client-token-file": { type: "string" },
        "allow-origin": { type: "string", multiple: true },
        "allow-host": { type: "string", multiple: true },
        session: { type: "string" },
        "state-dir": { type: "string" },
        owner: { type: "string" },
        "hold-wait-ms": { type: "string" },
        "call-timeout-ms": { type: "string" },
        "cancel-grace-ms": { type: "string" },
        "lookup-by-key": { type: "string", multiple: true },
        "table-cache-ms": { type: "string" },
        "relist-ms": { type: "string" },
        "outcome-linger-ms": { type: "string" },
      },
      strict: true,
    }));
  } catch (e) {
    throw new UsageError(`${(e as Error).message}. See --help.`);
  }
  if (values.help) return { help: true };
  const warnings: string[] = [];

  const number = (name: string, value: string | undefined): number | undefined => {
    if (value === undefined) return undefined;
    const n = Number(value);
    if (!Number.isInteger(n) || n < 0) throw new UsageError(`--${name} must be a whole number of milliseconds, not "${value}".`);
    return n;
  };

  const url = values.url ?? env.SAGABOARD_URL;
  if (!url) throw new UsageError("say where Sagaboard is: --url http://localhost:3000 (or SAGABOARD_URL).");
  let token = env.SAGABOARD_TOKEN;
  if (values["token-file"]) token = readSecretFile(values["token-file"], "the agent token");
  if (values.token) {
    token = values.token;
    warnings.push("--token on the command line can be read by every user of this machine (ps); put the token in SAGABOARD_TOKEN or a file named by --token-file.");
  }
  if (!token) throw new UsageError("give a team's agent token in SAGABOARD_TOKEN or a file named by --token-file; an admin makes one with `npm run token -- create --name <team>`.");
  let workerToken = env.SAGABOARD_WORKER_TOKEN ?? null;
  if (values["worker-token-file"]) workerToken = readSecretFile(values["worker-token-file"], "the worker token");
  if (values["worker-token"]) {
    workerToken = values["worker-token"];
    warnings.push("--worker-token on the command line can be read by every user of this machine (ps); put it in SAGABOARD_WORKER_TOKEN or a file named by --worker-token-file.");
  }
  if (!values["upstream-url"] && upstreamCommand.length === 0) {
    throw new UsageError("name the real server: its command after `--` (e.g. -- npx -y @modelcontextprotocol/server-memory) or --upstream-url.");
  }
  const lookupsByKey: Record<string, string> = {};
  for (const pair of values["lookup-by-key"] ?? []) {
    const [tool, lookup] = pair.split("=");
    if (!tool || !lookup) throw new UsageError(`--lookup-by-key takes TOOL=LOOKUP_TOOL, not "${pair}".`);
    lookupsByKey[tool] = lookup;
  }
  const passEnv: Record<string, string> = {};
  for (const name of values["pass-env"] ?? []) {
    if (/^SAGABOARD_/i.test(name)) throw new UsageError(`--pass-env ${name}: Sagaboard's own variables never reach the real server (its token would leak to whatever the server runs).`);
    const value = env[name];
    if (value === undefined) warnings.push(`--pass-env ${name}: the gateway has no such variable; the server starts without it.`);
    else passEnv[name] = value;
  }
  const listen = number("listen", values.listen) ?? null;
  const stateDir = values["state-dir"] ?? defaultStateDir(env);
  const crashAt = env.SAGABOARD_MCP_CRASH_AT ? crashPoint(env.SAGABOARD_MCP_CRASH_AT) : null;

  const config: GatewayConfig = {
    sagaboard: { baseUrl: url, token, outcomeLingerMs: number("outcome-linger-ms", values["outcome-linger-ms"]) ?? 0 },
    upstream: values["upstream-url"] ? { url: values["upstream-url"] } : { command: upstreamCommand[0]!, args: upstreamCommand.slice(1), env: passEnv },
    session: values.session ?? env.SAGABOARD_MCP_SESSION ?? null,
    owner: values.owner ?? null,
    holdWaitMs: number("hold-wait-ms", values["hold-wait-ms"]),
    callTimeoutMs: number("call-timeout-ms", values["call-timeout-ms"]),
    cancelGraceMs: number("cancel-grace-ms", values["cancel-grace-ms"]),
    tableCacheMs: number("table-cache-ms", values["table-cache-ms"]),
    relistMs: number("relist-ms", values["relist-ms"]),
    workerToken,
    lookupsByKey,
    listen,
    clientTokenFile: values["client-token-file"] ?? path.join(stateDir, "client-tokens"),
    allowOrigins: values["allow-origin"] ?? [],
    allowHosts: values["allow-host"] ?? [],
    stateDir,
    crashAt,
  };
  return { help: false, config, warnings };
}

/** The test-only crash point; a name outside the list is refused rather than ignored. */
function crashPoint(value: string): CrashPoint {
  if (!(CRASH_POINTS as readonly string[]).includes(value)) throw new UsageError(`SAGABOARD_MCP_CRASH_AT must be one of ${CRASH_POINTS.join(", ")}, not "${value}".`);
  return value as CrashPoint;
}
