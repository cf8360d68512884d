/**
 * What the MCP gateway's tests share: a real MCP client connected to a gateway process (the CLI,
 * stdio, or streamable HTTP) in front of a real server, a team with its token, the ledger server that counts every
 * effect in a file, and a reviewer approving held calls.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { createServer as createHttpServer, request as httpRequest } from "node:http";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { PrismaClient } from "@/lib/core/db/prisma";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { ToolRegistry } from "@/packages/client/src/saga/tools";
import { makeToken } from "../api/api-test-kit";
import { ReviewerEngine } from "@/packages/client/src/saga/reviewer-engine";

export const ROOT = process.cwd();
export const REVIEWER = { type: "user" as const, id: "rev@example.com" };
export const ADMIN = { type: "user" as const, id: "admin@example.com" };

/** What a tools/call answered. */
export type Result = { content: { type: string; text?: string }[]; isError?: boolean; structuredContent?: Record<string, unknown>; _meta?: Record<string, unknown> };

/** A client's session with one gateway process. */
export interface Session {
  client: Client;
  stderr: () => string;
  close: () => Promise<void>;
}

export const textOf = (r: Result) => r.content.map((c) => c.text ?? "").join(" ");

/** The bearer the HTTP tests' gateways give their client "test", and another client's. */
export const CLIENT_SECRET = "test-client-secret-0123456789abcdef";
export const OTHER_CLIENT_SECRET = "other-client-secret-0123456789abcdef";

/** A client's session with a gateway process serving streamable HTTP. */
export interface HttpSession extends Session {
  /** The port the gateway listens on. */
  port: number;
  /** The gateway process. */
  pid: number;
  /** The client ends its MCP session (an HTTP DELETE of it), as a client that is done does. */
  endSession: () => Promise<void>;
  /** Resolves when the gateway process has exited. */
  exited: Promise<void>;
  /** One raw JSON-RPC request on the session; with `dropAfterMs`, the link is dropped then (no cancel sent). */
  post: (method: string, params: Record<string, unknown>, dropAfterMs?: number) => Promise<{ dropped: boolean; body: unknown }>;
}

/** A port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The ledger server's command line, writing to `file`. */
export const ledgerServer = (file: string) => ["env", `LEDGER=${file}`, process.execPath, path.join(ROOT, "tests/mcp/ledger-server.mjs")];

/** The ledger's lines: one per real effect, with the key the gateway stamped. */
export const entries = (file: string): { key: string | null; text: string }[] => {
  try {
    return readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as { key: string | null; text: string });
  } catch {
    return [];
  }
};

/** The helpers bound to one test file's database and running server (`url()` is read when called). */
export function gatewayKit(getPrisma: () => Promise<PrismaClient>, url: () => string) {
  const dir = mkdtempSync(path.join(os.tmpdir(), "sagaboard-mcp-"));

  /** The gateway's own arguments every test gives: Sagaboard, no hold wait, and this file's state directory. */
  const common = () => ["--import", "tsx", path.join(ROOT, "packages/mcp-gateway/src/cli.ts"), "--url", url(), "--hold-wait-ms", "0", "--state-dir", path.join(dir, "state")];

  /** An MCP client connected to a gateway process in front of `upstream`; the token goes in the environment, as the README says. */
  async function connect(token: string, upstream: string[], options: { session?: string; env?: Record<string, string>; extra?: string[] } = {}): Promise<Session> {
    const args = [...common(), ...(options.extra ?? [])];
    if (options.session) args.push("--session", options.session);
    const transport = new StdioClientTransport({ command: process.execPath, args: [...args, "--", ...upstream], env: { ...(process.env as Record<string, string>), SAGABOARD_TOKEN: token, ...options.env }, cwd: ROOT, stderr: "pipe" });
    let err = "";
    transport.stderr?.on("data", (d: Buffer) => (err += d.toString()));
    const client = new Client({ name: "gateway-test", version: "1.0.0" });
    await client.connect(transport).catch(async (e: Error) => {
      await new Promise((r) => setTimeout(r, 200));
      throw new Error(`${e.message}; the gateway said: ${err}`);
    });
    return { client, stderr: () => err, close: () => client.close() };
  }

  /**
   * An MCP client connected over streamable HTTP to a gateway process serving `--listen` on a free
   * port. `post` sends one raw JSON-RPC request on the client's session and can drop the link (abort
   * the request) without the cancel notification the SDK would send: a broken response stream.
   */
  async function connectHttp(token: string, upstream: string[], options: { session?: string; env?: Record<string, string>; extra?: string[]; port?: number } = {}): Promise<HttpSession> {
    const port = options.port ?? (await freePort());
    const tokens = path.join(dir, "client-tokens");
    if (!existsSync(tokens)) writeFileSync(tokens, `test:${CLIENT_SECRET}\nother:${OTHER_CLIENT_SECRET}\n`, { mode: 0o600 });
    const args = [...common(), "--listen", String(port), "--client-token-file", tokens, ...(options.extra ?? [])];
    if (options.session) args.push("--session", options.session);
    const child = spawn(process.execPath, [...args, "--", ...upstream], { env: { ...process.env, SAGABOARD_TOKEN: token, ...options.env }, cwd: ROOT, stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    const listening = new Promise<void>((resolve, reject) => {
      child.stderr.on("data", (d: Buffer) => {
        err += d.toString();
        if (err.includes("MCP over streamable HTTP at")) resolve();
      });
      child.on("exit", (code, signal) => reject(new Error(`the gateway exited (${code ?? signal}) before listening: ${err}`)));
    });
    await listening;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    let running = true;
    void exited.then(() => (running = false));
    const endpoint = new URL(`http://127.0.0.1:${port}/mcp`);
    const transport = new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: { authorization: `Bearer ${CLIENT_SECRET}` } } });
    const client = new Client({ name: "gateway-http-test", version: "1.0.0" });
    await client.connect(transport);
    let nextId = 1_000_000;
    return {
      client,
      port,
      pid: child.pid ?? 0,
      stderr: () => err,
      exited,
      endSession: () => transport.terminateSession(),
      close: async () => {
        await client.close().catch(() => undefined);
        if (running) child.kill("SIGTERM");
      },
      async post(method, params, dropAfterMs) {
        const abort = new AbortController();
        const timer = dropAfterMs === undefined ? undefined : setTimeout(() => abort.abort(), dropAfterMs);
        try {
          const res = await fetch(endpoint, {
            method: "POST",
            headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${CLIENT_SECRET}`, "mcp-session-id": transport.sessionId ?? "", "mcp-protocol-version": transport.protocolVersion ?? "" },
            body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method, params }),
            signal: abort.signal,
          });
          return { dropped: false, body: await res.json() };
        } catch (e) {
          if (abort.signal.aborted) return { dropped: true, body: null };
          throw e;
        } finally {
          clearTimeout(timer);
        }
      },
    };
  }

  /** What the reviewer does on the escalation page: approve the held call. */
  async function approve(escalationId: string): Promise<void> {
    const engine = new ReviewerEngine({ store: new PrismaSagaStore(await getPrisma()), registry: new ToolRegistry() });
    await engine.decideHeldCall(escalationId, { approve: true, actor: REVIEWER });
  }

  /** What the reviewer does on the pivot screen: approve the plan as loaded. */
  async function approvePivot(pivotId: string): Promise<void> {
    const store = new PrismaSagaStore(await getPrisma());
    const engine = new ReviewerEngine({ store, registry: new ToolRegistry() });
    const pivot = await store.getPivot(pivotId);
    if (!pivot) throw new Error(`no pivot ${pivotId}`);
    await engine.decidePivot(pivotId, { approve: true, planHash: pivot.planHash, actor: REVIEWER });
  }

  /** Calls a tool; when it is held, approves it as a reviewer and re-sends it (a new JSON-RPC id). */
  async function callApproved(client: Client, name: string, args: Record<string, unknown>, options: { timeout?: number } = {}): Promise<Result> {
    const first = (await client.callTool({ name, arguments: args }, undefined, options)) as Result;
    if (first._meta?.["dev.sagaboard/held"] !== true) return first;
    await approve(first._meta["dev.sagaboard/escalationId"] as string);
    return (await client.callTool({ name, arguments: args }, undefined, options)) as Result;
  }

  /** A team's namespace, its agent token (with no tools yet: the gateway declares them), and a ledger file. */
  async function team(label: string) {
    const ns = `${label}${Date.now().toString(36)}`;
    return { prisma: await getPrisma(), ns, token: await makeToken([], ns), file: path.join(dir, `${ns}.jsonl`) };
  }

  return { dir, connect, connectHttp, approve, approvePivot, callApproved, team, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A client-side proxy that adds the gateway's bearer to every request: for MCP tools that cannot send
 * headers of their own (the conformance suite), standing for a client that holds its token.
 */
export async function bearerProxy(targetPort: number, secret: string): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createHttpServer((req, res) => {
    const upstream = httpRequest(
      { host: "127.0.0.1", port: targetPort, method: req.method, path: req.url, headers: { ...req.headers, host: `127.0.0.1:${targetPort}`, authorization: `Bearer ${secret}` } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://localhost:${port}/mcp`, close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve()))) };
}
