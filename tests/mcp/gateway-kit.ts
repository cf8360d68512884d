/**
 * What the MCP gateway's tests share: a real MCP client connected to a gateway process (the CLI,
 * stdio) in front of a real server, a team with its token, the ledger server that counts every
 * effect in a file, and a reviewer approving held calls.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { PrismaClient } from "@/lib/core/db/prisma";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { SagaEngine } from "@/lib/saga/engine";
import { ToolRegistry } from "@/lib/saga/tools";
import { makeToken } from "../api/api-test-kit";

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

  /** An MCP client connected to a gateway process in front of `upstream`. */
  async function connect(token: string, upstream: string[], options: { session?: string; env?: Record<string, string>; extra?: string[] } = {}): Promise<Session> {
    const args = ["--import", "tsx", path.join(ROOT, "packages/mcp-gateway/src/cli.ts"), "--url", url(), "--token", token, "--hold-wait-ms", "0", ...(options.extra ?? [])];
    if (options.session) args.push("--session", options.session);
    const transport = new StdioClientTransport({ command: process.execPath, args: [...args, "--", ...upstream], env: { ...(process.env as Record<string, string>), ...options.env }, cwd: ROOT, stderr: "pipe" });
    let err = "";
    transport.stderr?.on("data", (d: Buffer) => (err += d.toString()));
    const client = new Client({ name: "gateway-test", version: "1.0.0" });
    await client.connect(transport).catch(async (e: Error) => {
      await new Promise((r) => setTimeout(r, 200));
      throw new Error(`${e.message}; the gateway said: ${err}`);
    });
    return { client, stderr: () => err, close: () => client.close() };
  }

  /** What the reviewer does on the escalation page: approve the held call. */
  async function approve(escalationId: string): Promise<void> {
    const engine = new SagaEngine({ store: new PrismaSagaStore(await getPrisma()), registry: new ToolRegistry() });
    await engine.decideHeldCall(escalationId, { approve: true, actor: REVIEWER });
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

  return { dir, connect, approve, callApproved, team, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
