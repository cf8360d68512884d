/**
 * @sagaboard/client and @sagaboard/mcp-gateway as an outside team installs them: each built (tsup) and
 * packed (`npm pack`) from a copy of its folder alone, with no checkout around it (a package that
 * reached into the app through an alias or a path out of its folder fails to build there), installed
 * from the tarballs into an empty directory outside the checkout with `npm ci --offline`, and run
 * against a real server as a four-tool trip agent (the plain client and the LangGraph.js adapter)
 * and through the OpenAI Agents SDK adapter (a namespaced, held tool). The installed tree holds no @prisma/client, next or server
 * module, checked from `npm ls` and from every module the agent processes actually loaded. Effects are
 * counted in the team's own systems (a ledger file per key), and the glue each agent needed is printed.
 */
import { execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { ReviewerEngine } from "@/packages/client/src/saga/reviewer-engine";
import { ToolRegistry } from "@/packages/client/src/saga/tools";
import { editTool } from "@/lib/server/tools/edit-tool";
import { makeToken, useTestDatabase } from "../api/api-test-kit";
import { startTestServer, type TestServer } from "../support/http-server";

const exec = promisify(execFile);
const getPrisma = useTestDatabase("packages");
const ROOT = process.cwd();
const PACKAGES = path.join(ROOT, "packages");
const OUTSIDE = mkdtempSync(path.join(os.tmpdir(), "sagaboard-team-"));
/** Where each package's folder is copied to be built alone, outside the checkout. */
const BUILDS = mkdtempSync(path.join(os.tmpdir(), "sagaboard-build-"));
const LEDGER = path.join(OUTSIDE, "ledger.json");
const REVIEWER = { type: "user" as const, id: "rev@example.com" };
let server: TestServer;

/** The exact versions this checkout installed, so the offline install finds them in npm's cache. */
function installedVersion(name: string): string {
  return (JSON.parse(readFileSync(path.join(ROOT, "node_modules", name, "package.json"), "utf8")) as { version: string }).version;
}

// The team's own systems (not glue): effects once per idempotency key, in a ledger file the test reads.
const SYSTEMS = `import { readFileSync, writeFileSync } from "node:fs";
const file = process.env.LEDGER;
const read = () => { try { return JSON.parse(readFileSync(file, "utf8")); } catch { return { effects: [], undone: [] }; } };
const write = (l) => writeFileSync(file, JSON.stringify(l));
export async function effect(system, key, args) { const l = read(); l.effects.push({ system, key, args }); write(l); return { id: system + "-" + l.effects.length, ...args }; }
export async function find(system, key) { const e = read().effects.find((x) => x.system === system && x.key === key); return e ? { externalRef: system + "-" + key.slice(0, 6), result: e.args } : null; }
export async function release(system, ctx) { const l = read(); l.undone.push({ system, key: ctx.compensationKey, target: ctx.target.stepKey }); write(l); return { externalRef: null }; }
export async function released(ctx) { return { done: read().undone.some((u) => u.target === ctx.target.stepKey) }; }
`;

// The plain client: four tools declared by the team, a run, the pivot, and the commit of the approved plan.
const PLAIN = `import { z } from "zod";
import { defineCompensator, defineTool, declareTools, HttpSagaStore, SagaEngine, ToolRegistry } from "@sagaboard/client";
import { effect, find, release, released } from "./systems.mjs";
const { URL: baseUrl, TOKEN: token } = process.env;
// --- glue ---
const undo = (name) => defineCompensator({ name: "trip." + name, args: z.object({}), run: (_a, c) => release(name, c), verify: (_a, c) => released(c) });
const tool = (name, cls, args, comp) => defineTool({ name: "trip." + name, class: cls, args, call: async (a, c) => ({ externalRef: null, result: await effect(name, c.stepKey, a) }),
  lookup: (key) => find(name, key), ...(comp ? { compensation: { with: "trip." + comp, build: () => ({}) } } : {}),
  ...(cls === "IRREVERSIBLE" ? { correction: (a) => ({ audience: ["customer"], subject: "About your trip to " + a.city, body: "Please disregard our earlier email." }) } : {}) });
const registry = new ToolRegistry([
  tool("book_hotel", "COMPENSATABLE", z.object({ city: z.string(), nights: z.number().int() }), "cancel_hotel"),
  tool("hold_seat", "COMPENSATABLE", z.object({ flight: z.string() }), "release_seat"),
  tool("hold_car", "REVERSIBLE", z.object({ city: z.string() }), "release_car"),
  tool("send_itinerary", "IRREVERSIBLE", z.object({ to: z.string(), city: z.string() })),
], [undo("cancel_hotel"), undo("release_seat"), undo("release_car")]);
const engine = new SagaEngine({ store: new HttpSagaStore({ baseUrl, token }), registry });
// --- end glue ---
if (process.argv[2] === "declare") {
  console.log(JSON.stringify(await declareTools({ baseUrl, token }, registry, { "trip.send_itinerary": { owner: "travel-desk" } })));
} else {
  const run = await engine.startRun({ title: "Trip to Lisbon (installed package)", agent: "trip" });
  await run.call("trip.hold_car", { city: "Lisbon" });
  await run.call("trip.hold_seat", { flight: "TP-1350" });
  await run.call("trip.book_hotel", { city: "Lisbon", nights: 3 });
  const pivot = await run.requestPivot({ summary: "Car, seat and hotel held; email the itinerary.", plan: [{ tool: "trip.send_itinerary", args: { to: "ada@example.com", city: "Lisbon" } }] });
  console.log("PIVOT " + pivot.id);
  await run.awaitPivot(pivot.id, { timeoutMs: 60000 });
  const committed = await run.commitPlan(pivot.id);
  console.log("RESULT " + JSON.stringify({ runId: run.runId, status: committed.status }));
}
`;

// The Vercel AI SDK adapter as a chat route uses it: the held email becomes the SDK's approval request;
// the person's "approve" in the chat runs nothing; the reviewer's approval in Sagaboard lets the next message send it once.
const AISDK = `import { z } from "zod";
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { HttpSagaStore, SagaEngine, ToolRegistry } from "@sagaboard/client";
import { SagaChat, currentSagaStep, sagaTool } from "@sagaboard/client/ai-sdk";
import { effect, find } from "./systems.mjs";
const { URL: baseUrl, TOKEN: token } = process.env;
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
const model = new MockLanguageModelV4({ doGenerate: async ({ prompt }) => { // asks for the email until it has a result, then answers in words
  const sent = prompt.some((m) => m.role === "tool" && m.content.some((p) => p.type === "tool-result" && p.output.type !== "error-text"));
  return sent ? { content: [{ type: "text", text: "Told Ada." }], finishReason: { unified: "stop", raw: undefined }, usage, warnings: [] }
    : { content: [{ type: "tool-call", toolCallId: "call_" + prompt.length, toolName: "trip.send_itinerary", input: JSON.stringify({ to: "ada@example.com", city: "Braga" }) }], finishReason: { unified: "tool-calls", raw: undefined }, usage, warnings: [] }; } });
// --- glue ---
const send = sagaTool({ name: "trip.send_itinerary", description: "Email the itinerary", inputSchema: z.object({ to: z.string(), city: z.string() }), class: "IRREVERSIBLE",
  execute: (a) => effect("send_itinerary", currentSagaStep().stepKey, a), lookup: (key) => find("send_itinerary", key),
  correction: (a) => ({ audience: ["customer"], subject: "About your trip to " + a.city, body: "Please disregard our earlier email." }) });
const engine = new SagaEngine({ store: new HttpSagaStore({ baseUrl, token }), registry: new ToolRegistry([send.definition]) });
async function chatRoute(runId, history) { // the body of a chat route's POST: one SagaChat per request
  const chat = new SagaChat({ engine, runId, tools: [send] });
  const messages = await chat.messages(history);
  const result = await generateText({ model, messages, tools: chat.tools, toolApproval: chat.toolApproval, stopWhen: stepCountIs(4) });
  return { chat, text: result.text, history: [...messages, ...result.responseMessages] };
}
// --- end glue ---
const run = await engine.startRun({ title: "Trip to Braga (installed AI SDK adapter)", agent: "trip" });
const first = await chatRoute(run.runId, [{ role: "user", content: "Tell Ada about Braga." }]);
const request = first.history.flatMap((m) => (typeof m.content === "string" ? [] : m.content)).find((p) => p.type === "tool-approval-request");
const approved = { role: "tool", content: [{ type: "tool-approval-response", approvalId: request.approvalId, approved: true }] };
const early = await chatRoute(run.runId, [...first.history, approved]); // the person approves in the chat: nothing is sent
console.log("EARLY " + JSON.stringify({ text: early.text }));
console.log("HELD " + JSON.stringify((await first.chat.pending())[0]));
let next = early;
for (let i = 0; i < 300 && next.text !== "Told Ada."; i++) { await new Promise((r) => setTimeout(r, 200)); next = await chatRoute(run.runId, [...next.history, { role: "user", content: "And now?" }]); }
console.log("RESULT " + JSON.stringify({ runId: run.runId, output: next.text }));
`;

// An agent that ends badly 10 ms after a confirmed call (an uncaught throw, or process.exit()), with
// the client's default or with pipelining opted in (LINGER_MS): nothing it was told may be lost.
const EXITING = `import { z } from "zod";
import { defineCompensator, defineTool, HttpSagaStore, SagaEngine, ToolRegistry } from "@sagaboard/client";
import { effect, find, release, released } from "./systems.mjs";
const { URL: baseUrl, TOKEN: token, END, LINGER_MS } = process.env;
const registry = new ToolRegistry([defineTool({ name: "trip.hold_car", class: "REVERSIBLE", args: z.object({ city: z.string() }),
  call: async (a, c) => ({ externalRef: null, result: await effect("hold_car", c.stepKey, a) }), lookup: (key) => find("hold_car", key), compensation: { with: "trip.release_car", build: () => ({}) } })],
  [defineCompensator({ name: "trip.release_car", args: z.object({}), run: (_a, c) => release("release_car", c), verify: (_a, c) => released(c) })]);
const linger = LINGER_MS ? { outcomeLingerMs: Number(LINGER_MS) } : {};
const engine = new SagaEngine({ store: new HttpSagaStore({ baseUrl, token, ...linger }), registry });
const run = await engine.startRun({ title: "A car in Evora (the agent then ends badly)", agent: "trip" });
await run.call("trip.hold_car", { city: "Evora" });
console.log("RUN " + run.runId);
setTimeout(() => { if (END === "throw") throw new Error("the team's own bug, 10 ms after a confirmed call"); process.exit(3); }, 10);
`;

// The OpenAI Agents SDK adapter: a namespaced irreversible tool the SDK renames; held, approved in Sagaboard, sent once.
const OPENAI = `import { z } from "zod";
import { Agent, Runner, Usage, setTracingDisabled } from "@openai/agents";
import { HttpSagaStore, SagaEngine, ToolRegistry } from "@sagaboard/client";
import { SagaAgentRun, currentSagaStep, sagaTool } from "@sagaboard/client/openai-agents";
import { effect, find } from "./systems.mjs";
setTracingDisabled(true);
const { URL: baseUrl, TOKEN: token } = process.env;
class ScriptedModel { // a model without a network: asks for the email once, then answers in words
  async getResponse(req) { const done = (Array.isArray(req.input) ? req.input : []).some((i) => i.type === "function_call_result");
    return { usage: new Usage(), output: done ? [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Told Ada." }] }]
      : [{ type: "function_call", name: "trip_send_itinerary", callId: "call_1", status: "completed", arguments: JSON.stringify({ to: "ada@example.com", city: "Porto" }) }] }; }
  async *getStreamedResponse() { throw new Error("no streaming"); }
}
// --- glue ---
const send = sagaTool({ name: "trip.send_itinerary", description: "Email the itinerary", parameters: z.object({ to: z.string(), city: z.string() }), class: "IRREVERSIBLE",
  execute: (a) => effect("send_itinerary", currentSagaStep().stepKey, a), lookup: (key) => find("send_itinerary", key),
  correction: (a) => ({ audience: ["customer"], subject: "About your trip to " + a.city, body: "Please disregard our earlier email." }) });
const engine = new SagaEngine({ store: new HttpSagaStore({ baseUrl, token }), registry: new ToolRegistry([send.definition]) });
const run = await engine.startRun({ title: "Trip to Porto (installed adapter)", agent: "trip" });
const saga = new SagaAgentRun({ engine, runId: run.runId, tools: [send] });
const agent = new Agent({ name: "trip", instructions: "Email the itinerary.", model: new ScriptedModel(), tools: saga.tools });
// --- end glue ---
const held = await new Runner({ tracingDisabled: true }).run(agent, "Tell Ada about Porto.");
const [pending] = saga.pending(held.state);
console.log("HELD " + JSON.stringify(pending));
for (let i = 0; i < 300 && (await saga.settleApprovals(held.state)).approved.length === 0; i++) await new Promise((r) => setTimeout(r, 200));
const done = await new Runner({ tracingDisabled: true }).run(agent, held.state);
console.log("RESULT " + JSON.stringify({ runId: run.runId, output: done.finalOutput }));
`;

// The LangGraph.js adapter: the same four tools as graph tools, one node; the held email interrupts the graph until a reviewer approves it in Sagaboard.
const LANGGRAPH = `import { z } from "zod";
import { Annotation, Command, END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { defineCompensator, HttpSagaStore, SagaEngine, ToolRegistry } from "@sagaboard/client";
import { SagaboardAnnotation, SagaGraphRun, currentSagaStep, sagaTool } from "@sagaboard/client/langgraph";
import { effect, find, release, released } from "./systems.mjs";
const { URL: baseUrl, TOKEN: token } = process.env;
// --- glue ---
const undo = (name) => defineCompensator({ name: "trip." + name, args: z.object({}), run: (_a, c) => release(name, c), verify: (_a, c) => released(c) });
const policy = (name, cls, comp) => ({ class: cls, lookup: (key) => find(name, key), ...(comp ? { compensation: { with: "trip." + comp, build: () => ({}) } } : {}),
  ...(cls === "IRREVERSIBLE" ? { correction: (a) => ({ audience: ["customer"], subject: "About your trip to " + a.city, body: "Please disregard our earlier email." }) } : {}) });
const tool = (name, cls, schema, comp) => sagaTool({ name: "trip." + name, description: name, schema, func: (a) => effect(name, currentSagaStep().stepKey, a) }, policy(name, cls, comp));
const tools = [tool("hold_car", "REVERSIBLE", z.object({ city: z.string() }), "release_car"), tool("hold_seat", "COMPENSATABLE", z.object({ flight: z.string() }), "release_seat"),
  tool("book_hotel", "COMPENSATABLE", z.object({ city: z.string(), nights: z.number().int() }), "cancel_hotel"), tool("send_itinerary", "IRREVERSIBLE", z.object({ to: z.string(), city: z.string() }))];
const engine = new SagaEngine({ store: new HttpSagaStore({ baseUrl, token }), registry: new ToolRegistry(tools.map((t) => t.definition), [undo("cancel_hotel"), undo("release_seat"), undo("release_car")]) });
const run = await engine.startRun({ title: "Trip to Faro (installed LangGraph adapter)", agent: "trip" });
const saga = new SagaGraphRun({ engine, runId: run.runId, tools });
const State = Annotation.Root({ ...SagaboardAnnotation.spec, sent: Annotation() });
const graph = new StateGraph(State).addNode("trip", saga.node(async () => {
  for (const [name, args] of [["hold_car", { city: "Faro" }], ["hold_seat", { flight: "TP-1900" }], ["book_hotel", { city: "Faro", nights: 2 }]]) await saga.tool("trip." + name).invoke(args);
  return { sent: await saga.tool("trip.send_itinerary").invoke({ to: "ada@example.com", city: "Faro" }) };
})).addEdge(START, "trip").addEdge("trip", END).compile({ checkpointer: new MemorySaver() });
// --- end glue ---
const thread = { configurable: { thread_id: run.runId } };
let result = await graph.invoke({}, thread);
console.log("HELD " + JSON.stringify(result.__interrupt__[0].value.sagaboard));
// A resume only says "look again": the decision is the reviewer's, in Sagaboard.
for (let i = 0; i < 300 && result.__interrupt__?.length; i++) { await new Promise((r) => setTimeout(r, 200)); result = await graph.invoke(new Command({ resume: "look again" }), thread); }
await run.complete();
console.log("RESULT " + JSON.stringify({ runId: run.runId, sent: result.sent ?? null }));
`;

// Records every module a process loads (file URLs), so the test can say none is a server module.
const TRACE = `import { register } from "node:module";
register("./trace-hooks.mjs", import.meta.url);
`;
const TRACE_HOOKS = `import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) { const r = await next(specifier, context); appendFileSync(process.env.TRACE, r.url + "\\n"); return r; }
`;

/**
 * Builds and packs one package from a copy of its folder alone (no node_modules, no dist), in a
 * directory with no checkout around it: its own tsconfig, no alias into the app. The toolchain it
 * compiles with (tsup, typescript, the types and peers it is checked against) is linked from this
 * checkout's node_modules, as a team's install would provide it; `@sagaboard/*` is not linked, so a
 * package needing another gets that one's packed tarball, unpacked. Returns the tarball's file name.
 */
async function buildFromCopy(name: string, needs: Record<string, string> = {}): Promise<string> {
  const dir = path.join(BUILDS, name);
  cpSync(path.join(PACKAGES, name), dir, { recursive: true, filter: (from) => !/[/\\](node_modules|dist)$/.test(from) });
  const modules = path.join(dir, "node_modules");
  mkdirSync(modules);
  for (const entry of readdirSync(path.join(ROOT, "node_modules"))) {
    if (entry !== "@sagaboard") symlinkSync(path.join(ROOT, "node_modules", entry), path.join(modules, entry));
  }
  for (const [pkg, tarball] of Object.entries(needs)) {
    mkdirSync(path.join(modules, pkg), { recursive: true });
    await exec("tar", ["xzf", path.join(OUTSIDE, tarball), "-C", path.join(modules, pkg), "--strip-components=1"]);
  }
  await exec("npx", ["tsup"], { cwd: dir });
  const { stdout } = await exec("npm", ["pack", "--json", "--pack-destination", OUTSIDE], { cwd: dir });
  return (JSON.parse(stdout) as [{ filename: string }])[0].filename;
}

/** A lockfile entry, as package-lock.json v3 writes it. */
type LockEntry = { version?: string; dependencies?: Record<string, string>; optionalDependencies?: Record<string, string>; peerDependencies?: Record<string, string>; peerDependenciesMeta?: Record<string, { optional?: boolean }>; [field: string]: unknown };

/**
 * The team's lockfile: our tarballs (package name -> file name), plus every package they and the
 * team's other dependencies need, copied from this checkout's lockfile (the same versions and
 * integrities, so npm finds each in its cache), resolved the way Node resolves (the nearest
 * node_modules up the tree).
 */
function teamLockfile(tarballs: Record<string, string>, dependencies: Record<string, string>): object {
  const ours = (JSON.parse(readFileSync(path.join(ROOT, "package-lock.json"), "utf8")) as { packages: Record<string, LockEntry> }).packages;
  const manifests = Object.fromEntries(
    Object.keys(tarballs).map((name) => [name, JSON.parse(readFileSync(path.join(PACKAGES, name.replace("@sagaboard/", ""), "package.json"), "utf8")) as LockEntry & { license?: string }]),
  );
  const packages: Record<string, LockEntry> = {};
  const queue = Object.keys(dependencies).filter((name) => !(name in tarballs)).map((name) => `node_modules/${name}`);
  for (const manifest of Object.values(manifests)) queue.push(...Object.keys(manifest.dependencies ?? {}).filter((name) => !(name in tarballs)).map((name) => `node_modules/${name}`));
  while (queue.length > 0) {
    const key = queue.shift()!;
    if (packages[key]) continue;
    const { dev: _dev, devOptional: _devOptional, peer: _peer, ...entry } = ours[key] ?? {};
    if (!ours[key]) throw new Error(`${key} is not in the checkout's lockfile`);
    // The registry's tarball address, so npm finds the tarball in its cache by address and integrity
    // without the package's registry document (not cached for every package).
    const name = key.slice(key.lastIndexOf("node_modules/") + "node_modules/".length);
    packages[key] = { resolved: `https://registry.npmjs.org/${name}/-/${name.split("/").pop()}-${entry.version}.tgz`, ...entry };
    const required = { ...entry.dependencies, ...entry.optionalDependencies, ...Object.fromEntries(Object.entries(entry.peerDependencies ?? {}).filter(([n]) => !entry.peerDependenciesMeta?.[n]?.optional)) };
    for (const dep of Object.keys(required)) {
      let base = key;
      let found: string | null = null;
      for (;;) {
        if (ours[`${base}/node_modules/${dep}`]) {
          found = `${base}/node_modules/${dep}`;
          break;
        }
        const up = base.lastIndexOf("/node_modules/");
        if (up < 0) break;
        base = base.slice(0, up);
      }
      found ??= ours[`node_modules/${dep}`] ? `node_modules/${dep}` : null;
      if (found) queue.push(found); // a missing optional dependency (another platform's binary) is fine
    }
  }
  for (const [name, tarball] of Object.entries(tarballs)) {
    const manifest = manifests[name]!;
    packages[`node_modules/${name}`] = {
      version: manifest.version,
      resolved: `file:${tarball}`,
      integrity: `sha512-${createHash("sha512").update(readFileSync(path.join(OUTSIDE, tarball))).digest("base64")}`,
      ...(manifest.license ? { license: manifest.license } : {}),
      ...(manifest.bin ? { bin: manifest.bin } : {}),
      dependencies: manifest.dependencies,
      peerDependencies: manifest.peerDependencies,
      peerDependenciesMeta: manifest.peerDependenciesMeta,
    };
  }
  return { name: "team-trip", lockfileVersion: 3, requires: true, packages: { "": { name: "team-trip", dependencies }, ...packages } };
}

/** Runs `script` in the team's directory; lines it prints are handed to `onLine` as they come. */
function agent(script: string, env: Record<string, string>, onLine: (line: string) => void = () => undefined): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    // A clean environment: nothing of this checkout's (DATABASE_URL, NODE_PATH...) reaches the team's process.
    const clean: NodeJS.ProcessEnv = { NODE_ENV: "production", PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? OUTSIDE, LEDGER, TRACE: path.join(OUTSIDE, `${script}.modules`), ...env };
    const child = spawn(process.execPath, ["--import", "./trace.mjs", script, ...(env.ARG ? [env.ARG] : [])], { cwd: OUTSIDE, env: clean, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      const text = d.toString();
      out += text;
      for (const line of text.split("\n")) if (line.trim()) onLine(line.trim());
    });
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    child.on("error", reject);
    child.on("exit", (code) => resolve({ code, out }));
  });
}

/** Lines between the glue markers, blank lines and comments left out. */
function glueLines(source: string): number {
  const body = source.slice(source.indexOf("// --- glue ---") + 16, source.indexOf("// --- end glue ---"));
  return body.split("\n").filter((l) => l.trim() && !l.trim().startsWith("//")).length;
}

function ledger(): { effects: { system: string; key: string }[]; undone: unknown[] } {
  return JSON.parse(readFileSync(LEDGER, "utf8")) as { effects: { system: string; key: string }[]; undone: unknown[] };
}

beforeAll(async () => {
  server = await startTestServer();
  const client = await buildFromCopy("client");
  const gateway = await buildFromCopy("mcp-gateway", { "@sagaboard/client": client });
  // Offline: npm's cache holds the tarballs this checkout installed, not the registry's package
  // documents, so the team's lockfile is written here (the packages' entries copied from ours) and
  // `npm ci --offline` installs from the cache by integrity, asking no registry.
  const dependencies = {
    "@sagaboard/client": `file:${client}`,
    "@sagaboard/mcp-gateway": `file:${gateway}`,
    zod: installedVersion("zod"),
    "@openai/agents": installedVersion("@openai/agents"),
    "@langchain/core": installedVersion("@langchain/core"),
    "@langchain/langgraph": installedVersion("@langchain/langgraph"),
    ai: installedVersion("ai"),
  };
  writeFileSync(path.join(OUTSIDE, "package.json"), JSON.stringify({ name: "team-trip", private: true, type: "module", dependencies }));
  writeFileSync(path.join(OUTSIDE, "package-lock.json"), JSON.stringify(teamLockfile({ "@sagaboard/client": client, "@sagaboard/mcp-gateway": gateway }, dependencies)));
  await exec("npm", ["ci", "--offline", "--no-audit", "--no-fund", "--ignore-scripts"], { cwd: OUTSIDE });
  writeFileSync(path.join(OUTSIDE, "systems.mjs"), SYSTEMS);
  writeFileSync(path.join(OUTSIDE, "plain.mjs"), PLAIN);
  writeFileSync(path.join(OUTSIDE, "exiting.mjs"), EXITING);
  writeFileSync(path.join(OUTSIDE, "openai.mjs"), OPENAI);
  writeFileSync(path.join(OUTSIDE, "aisdk.mjs"), AISDK);
  writeFileSync(path.join(OUTSIDE, "langgraph.mjs"), LANGGRAPH);
  writeFileSync(path.join(OUTSIDE, "trace.mjs"), TRACE);
  writeFileSync(path.join(OUTSIDE, "trace-hooks.mjs"), TRACE_HOOKS);
}, 300_000);

afterAll(async () => {
  await server?.close();
  rmSync(OUTSIDE, { recursive: true, force: true });
  rmSync(BUILDS, { recursive: true, force: true });
}, 120_000); // the team's node_modules (three agent frameworks) takes a while to delete on a busy machine

/** Approves each pivot and held call a line names, as a reviewer in the dashboard would. */
async function reviewer(line: string): Promise<void> {
  const engine = new ReviewerEngine({ store: new PrismaSagaStore(await getPrisma()), registry: new ToolRegistry() });
  if (line.startsWith("PIVOT ")) {
    const pivot = (await engine.deps.store!.getPivot(line.slice(6)))!;
    await engine.decidePivot(pivot.id, { approve: true, actor: REVIEWER, planHash: pivot.planHash });
  }
  if (line.startsWith("HELD ")) {
    const held = JSON.parse(line.slice(5)) as { escalationId: string };
    await engine.decideHeldCall(held.escalationId, { approve: true, actor: REVIEWER });
  }
}

/**
 * Runs an adapter agent whose call is held, deciding as a reviewer each line it prints; it must exit 0.
 * Returns the held call it printed (HELD {...}) and its final RESULT {...}.
 */
async function heldAgent(script: string, token: string): Promise<{ held: { tool: string; reason: string }; result: unknown; out: string }> {
  const decisions: Promise<void>[] = [];
  const run = await agent(script, { URL: server.url, TOKEN: token }, (line) => decisions.push(reviewer(line)));
  await Promise.all(decisions);
  expect(run.code, run.out).toBe(0);
  return { held: JSON.parse(run.out.split("HELD ")[1]!.split("\n")[0]!) as { tool: string; reason: string }, result: JSON.parse(run.out.split("RESULT ")[1]!) as unknown, out: run.out };
}

describe("@sagaboard/client and @sagaboard/mcp-gateway built from copies of their folders, installed from their tarballs outside the checkout", () => {
  it("has no database, web framework or server module in the installed tree", async () => {
    const { stdout } = await exec("npm", ["ls", "--all", "--parseable"], { cwd: OUTSIDE }).catch((e: { stdout: string }) => ({ stdout: e.stdout }));
    const installed = stdout.split("\n").map((p) => path.relative(path.join(OUTSIDE, "node_modules"), p));
    expect(installed).toEqual(expect.arrayContaining([path.join("@sagaboard", "client"), path.join("@sagaboard", "mcp-gateway")]));
    expect(installed.filter((p) => /(^|\/)(@prisma|prisma|next|next-auth|better-sqlite3|pg|react|react-dom|bcryptjs|nodemailer|pino)(\/|$)/.test(p))).toEqual([]);
    const shipped = readdirSync(path.join(OUTSIDE, "node_modules", "@sagaboard", "client", "dist"));
    expect(shipped).toEqual(expect.arrayContaining(["index.js", "index.d.ts", "openai-agents.js", "openai-agents.d.ts", "langgraph.js", "langgraph.d.ts", "ai-sdk.js", "ai-sdk.d.ts"]));
  });

  it("exports the agent's API at the root: no port between the engine and the server, no reviewer's decision", async () => {
    const script = `const root = await import("@sagaboard/client");
const engine = new root.SagaEngine({ store: new root.HttpSagaStore({ baseUrl: "http://127.0.0.1:9", token: "t" }), registry: new root.ToolRegistry() });
const methods = Object.getOwnPropertyNames(Object.getPrototypeOf(engine)).filter((m) => m !== "constructor");
console.log(JSON.stringify({ names: Object.keys(root).sort(), methods }));`;
    writeFileSync(path.join(OUTSIDE, "root-names.mjs"), script);
    const { stdout } = await exec(process.execPath, ["root-names.mjs"], { cwd: OUTSIDE });
    const { names, methods } = JSON.parse(stdout) as { names: string[]; methods: string[] };
    console.log(`packages: @sagaboard/client's root exports ${names.length} values: ${names.join(", ")}`);
    expect(names).toEqual(expect.arrayContaining(["SagaEngine", "defineTool", "ToolRegistry", "HttpSagaStore", "SagaError", "SagaboardApiError", "declareTools", "Worker"]));
    expect(names).not.toContain("ReviewerEngine");
    for (const reviewerOnly of ["decidePivot", "decideHeldCall", "settleUnknown", "resolveEscalation"]) expect(methods).not.toContain(reviewerOnly);
    const declarations = readFileSync(path.join(OUTSIDE, "node_modules", "@sagaboard", "client", "dist", "index.d.ts"), "utf8");
    const exported = [...declarations.matchAll(/export \{([^}]*)\}/g)].flatMap((m) => m[1]!.split(",")).map((n) => n.trim().replace(/^type /, "").split(" as ").pop()!).filter(Boolean);
    console.log(`packages: with types, ${exported.length} names: ${[...exported].sort().join(", ")}`);
    for (const port of ["SagaServer", "AgentPort", "CallPort", "PivotPort", "UnwindPort", "SagaStore"]) expect(exported).not.toContain(port);
    expect(exported).toEqual(expect.arrayContaining(["HeldCall", "JournaledRun", "SagaToolPolicy", "Actor", "UnwindReport"]));
  });

  it("installs the MCP gateway beside the client, which it imports by name", async () => {
    const script = `const start = await import("@sagaboard/mcp-gateway");
const inProcess = await import("@sagaboard/mcp-gateway/in-process");
console.log(JSON.stringify({ start: Object.keys(start).sort(), inProcess: Object.keys(inProcess).sort() }));`;
    writeFileSync(path.join(OUTSIDE, "gateway-names.mjs"), script);
    const { stdout } = await exec(process.execPath, ["gateway-names.mjs"], { cwd: OUTSIDE });
    expect(JSON.parse(stdout)).toMatchObject({ start: expect.arrayContaining(["startGateway"]), inProcess: expect.arrayContaining(["throughSagaboard"]) });
    const shipped = readdirSync(path.join(OUTSIDE, "node_modules", "@sagaboard", "mcp-gateway", "dist"));
    for (const file of shipped.filter((f) => f.endsWith(".js"))) {
      const code = readFileSync(path.join(OUTSIDE, "node_modules", "@sagaboard", "mcp-gateway", "dist", file), "utf8");
      // The client is imported by name, not bundled a second time into the gateway.
      expect(code, file).not.toMatch(/class OutcomePipeline|class HttpSagaStore/);
    }
  });

  it("names the adapters' public types, so a team's own published declarations compile (no TS2742)", async () => {
    const team = `import type { HeldCall, JournaledRun, SagaToolPolicy } from "@sagaboard/client/langgraph";
import type { HeldCall as OpenAIHeld, SagaToolPolicy as OpenAIPolicy } from "@sagaboard/client/openai-agents";
export const trip: SagaToolPolicy<{ city: string }> = { class: "COMPENSATABLE", owner: "travel-desk" };
export const sameShape: OpenAIPolicy<{ city: string }> = trip;
export function heldTools(held: readonly HeldCall[], also: readonly OpenAIHeld[]) { return [...held, ...also].map((h) => h.tool); }
export function journalOf(run: JournaledRun) { return run; }
`;
    writeFileSync(path.join(OUTSIDE, "team.ts"), team);
    const tsc = path.join(ROOT, "node_modules", "typescript", "bin", "tsc");
    const args = ["--declaration", "--emitDeclarationOnly", "--strict", "--skipLibCheck", "--module", "nodenext", "--moduleResolution", "nodenext", "--target", "es2022", "--outDir", "types-out", "team.ts"];
    const compiled = await exec(process.execPath, [tsc, ...args], { cwd: OUTSIDE }).then(() => "", (e: { stdout: string }) => e.stdout);
    expect(compiled).toBe("");
    expect(readFileSync(path.join(OUTSIDE, "types-out", "team.d.ts"), "utf8")).toMatch(/SagaToolPolicy<\{\s*city: string;?\s*\}>/);
  });

  it("runs a four-tool trip agent with the plain client: declared, approved, committed, one effect per tool", async () => {
    const prisma = await getPrisma();
    // The team's bootstrap: a token for its namespace before its tools exist; declaring adds them.
    const token = await makeToken([], "trip");
    const env = { URL: server.url, TOKEN: token.secret };
    const declared = await agent("plain.mjs", { ...env, ARG: "declare" });
    expect(declared.code, declared.out).toBe(0);
    const result = JSON.parse(declared.out) as { namespace: string; tools: { name: string; status: string }[] };
    expect(result.tools.map((t) => `${t.name}:${t.status}`).sort()).toEqual(["trip.book_hotel:UNREVIEWED", "trip.hold_car:UNREVIEWED", "trip.hold_seat:UNREVIEWED", "trip.send_itinerary:UNREVIEWED"]);
    // The correction template and audience came from the tool's own correction function, not typed by
    // hand; they wait as the team's proposal for an admin to accept.
    expect((await prisma.toolPolicy.findUniqueOrThrow({ where: { name: "trip.send_itinerary" } })).proposal).toMatchObject({
      correctionSubject: "About your trip to {{city}}",
      correctionBody: "Please disregard our earlier email.",
      audienceRule: "customer",
    });
    for (const { name } of result.tools) {
      const row = await prisma.toolPolicy.findUniqueOrThrow({ where: { name } });
      await editTool(prisma, { name, expectedVersion: row.policyVersion, changes: { status: "REVIEWED" }, reason: "checked against the team's connector" }, { type: "user", id: "admin@example.com" });
    }

    const decisions: Promise<void>[] = [];
    const plain = await agent("plain.mjs", env, (line) => decisions.push(reviewer(line)));
    await Promise.all(decisions);
    expect(plain.code, plain.out).toBe(0);
    const { runId, status } = JSON.parse(plain.out.split("RESULT ")[1]!) as { runId: string; status: string };
    expect(status).toBe("committed");
    expect((await prisma.run.findUniqueOrThrow({ where: { id: runId } })).status).toBe("COMPLETED");
    const steps = await prisma.step.findMany({ where: { runId }, orderBy: { stepIdx: "asc" } });
    expect(steps.map((s) => `${s.tool}:${s.status}`)).toEqual(["trip.hold_car:CONFIRMED", "trip.hold_seat:CONFIRMED", "trip.book_hotel:CONFIRMED", "trip.send_itinerary:CONFIRMED"]);
    for (const step of steps) expect(ledger().effects.filter((e) => e.key === step.stepKey), step.tool).toHaveLength(1);
    console.log(`packages: TypeScript glue for four tools with the plain client: ${glueLines(PLAIN)} lines`);
    expect(glueLines(PLAIN)).toBeLessThanOrEqual(20);
  }, 120_000);

  for (const c of [{ end: "throw", code: 1 }, { end: "exit", code: 3 }, { end: "throw", code: 1, linger: "60000" }, { end: "exit", code: 3, linger: "60000" }]) {
    it(`loses nothing when the installed client's agent ends with ${c.end} 10 ms after a confirmed call (${c.linger ? "pipelining on" : "the default"})`, async () => {
      // After the plain client's test: the trip tools are declared and reviewed in the "trip" namespace.
      const token = await makeToken(["trip.hold_car"], `trip-exit-${c.end}-${c.linger ? "pipelined" : "default"}`);
      const ended = await agent("exiting.mjs", { URL: server.url, TOKEN: token.secret, END: c.end, ...(c.linger ? { LINGER_MS: c.linger } : {}) });
      expect(ended.code, ended.out).toBe(c.code);
      const runId = ended.out.split("RUN ")[1]!.split("\n")[0]!.trim();
      const [step, ...more] = await (await getPrisma()).step.findMany({ where: { runId } });
      expect(more).toHaveLength(0);
      expect(step).toMatchObject({ tool: "trip.hold_car", status: "CONFIRMED" });
      expect(ledger().effects.filter((e) => e.key === step!.stepKey)).toHaveLength(1);
    }, 60_000);
  }

  it("holds a namespaced tool through the OpenAI Agents SDK adapter, and sends it once after the approval", async () => {
    const token = await makeToken(["trip.send_itinerary"], "trip-openai");
    await (await getPrisma()).run.count();
    const { held, result } = await heldAgent("openai.mjs", token.secret);
    expect(held).toMatchObject({ tool: "trip.send_itinerary", reason: "IRREVERSIBLE" });
    const { runId, output } = result as { runId: string; output: string };
    expect(output).toBe("Told Ada.");
    const [email, ...more] = await (await getPrisma()).step.findMany({ where: { runId } });
    expect(more).toHaveLength(0);
    expect(email).toMatchObject({ tool: "trip.send_itinerary", status: "CONFIRMED", phase: "APPROVED_HOLD" });
    expect(ledger().effects.filter((e) => e.key === email!.stepKey)).toHaveLength(1);
    console.log(`packages: TypeScript glue for one tool with the OpenAI Agents SDK adapter: ${glueLines(OPENAI)} lines`);
  }, 120_000);

  it("holds a namespaced tool through the Vercel AI SDK adapter: a chat approval runs nothing, the reviewer's approval sends it once", async () => {
    const token = await makeToken(["trip.send_itinerary"], "trip-aisdk");
    const { held, result, out } = await heldAgent("aisdk.mjs", token.secret);
    expect(held).toMatchObject({ tool: "trip.send_itinerary", reason: "IRREVERSIBLE" });
    expect(JSON.parse(out.split("EARLY ")[1]!.split("\n")[0]!)).not.toEqual({ text: "Told Ada." });
    const { runId, output } = result as { runId: string; output: string };
    expect(output).toBe("Told Ada.");
    const [email, ...more] = await (await getPrisma()).step.findMany({ where: { runId } });
    expect(more).toHaveLength(0);
    expect(email).toMatchObject({ tool: "trip.send_itinerary", status: "CONFIRMED", phase: "APPROVED_HOLD" });
    expect(ledger().effects.filter((e) => e.key === email!.stepKey)).toHaveLength(1);
    console.log(`packages: TypeScript glue for one tool and a chat route with the Vercel AI SDK adapter: ${glueLines(AISDK)} lines`);
  }, 120_000);

  it("runs the four-tool trip agent as a LangGraph.js graph: the held email interrupts the graph, a reviewer approves it in Sagaboard, it is sent once", async () => {
    const token = await makeToken(["trip.hold_car", "trip.hold_seat", "trip.book_hotel", "trip.send_itinerary"], "trip-langgraph");
    const { held, result } = await heldAgent("langgraph.mjs", token.secret);
    expect(held).toMatchObject({ tool: "trip.send_itinerary", reason: "IRREVERSIBLE" });
    const { runId, sent } = result as { runId: string; sent: unknown };
    expect(sent).toMatchObject({ to: "ada@example.com", city: "Faro" });
    const prisma = await getPrisma();
    expect((await prisma.run.findUniqueOrThrow({ where: { id: runId } })).status).toBe("COMPLETED");
    const steps = await prisma.step.findMany({ where: { runId }, orderBy: { stepIdx: "asc" } });
    expect(steps.map((s) => `${s.tool}:${s.status}`)).toEqual(["trip.hold_car:CONFIRMED", "trip.hold_seat:CONFIRMED", "trip.book_hotel:CONFIRMED", "trip.send_itinerary:CONFIRMED"]);
    for (const step of steps) expect(ledger().effects.filter((e) => e.key === step.stepKey), step.tool).toHaveLength(1);
    console.log(`packages: TypeScript glue for four tools with the LangGraph.js adapter: ${glueLines(LANGGRAPH)} lines`);
    expect(glueLines(LANGGRAPH)).toBeLessThanOrEqual(20);
  }, 120_000);

  it("loaded no module from the checkout and no database or framework module at run time", () => {
    for (const script of ["plain.mjs", "openai.mjs", "langgraph.mjs"]) {
      const loaded = readFileSync(path.join(OUTSIDE, `${script}.modules`), "utf8").split("\n").filter(Boolean);
      expect(loaded.length, script).toBeGreaterThan(5);
      const files = loaded.filter((u) => u.startsWith("file:"));
      expect(files.filter((u) => u.includes(ROOT)), script).toEqual([]);
      expect(files.filter((u) => /node_modules\/(@prisma|prisma|next|better-sqlite3|pg)\//.test(u)), script).toEqual([]);
      expect(files.some((u) => u.includes("node_modules/@sagaboard/client/dist/")), script).toBe(true);
    }
  });
});
