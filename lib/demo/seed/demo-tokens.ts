/**
 * The demo's agent and worker tokens, minted once per database and kept in a local file in its data
 * directory (data/, never committed; lib/core/db/url.ts `dataDirectory`), so `npm start` and `npm run demo`
 * can reuse them without printing secrets.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { PrismaClient } from "@/generated/prisma";
import { authenticateAgent } from "@/lib/server/tokens/authenticate-agent";
import { createAgentToken } from "@/lib/server/tokens/create-agent-token";

/** The secrets of the demo's tokens. */
export interface DemoTokens {
  /** The support agent's token. */
  agent: string;
  /** The worker's token. */
  worker: string;
}

async function valid(prisma: PrismaClient, secret: string | undefined): Promise<boolean> {
  if (!secret) return false;
  return authenticateAgent(prisma, `Bearer ${secret}`).then(
    () => true,
    () => false,
  );
}

/** Reuses the demo tokens stored in `dataDir`, or mints new ones (with a fresh name suffix). */
export async function ensureDemoTokens(prisma: PrismaClient, dataDir: string, tools: string[]): Promise<DemoTokens> {
  const file = path.join(dataDir, ".demo-tokens.json");
  const stored = existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as Partial<DemoTokens>) : {};
  if ((await valid(prisma, stored.agent)) && (await valid(prisma, stored.worker))) return stored as DemoTokens;
  const suffix = Date.now().toString(36);
  const agent = await createAgentToken(prisma, { name: `support-agent-${suffix}`, tools, createdBy: "system:demo" });
  const worker = await createAgentToken(prisma, { name: `demo-worker-${suffix}`, tools, role: "worker", createdBy: "system:demo" });
  const tokens = { agent: agent.secret, worker: worker.secret };
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(tokens), { mode: 0o600 });
  return tokens;
}
