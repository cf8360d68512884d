/**
 * The MCP gateway between a real MCP client (the SDK's Client over stdio) and real MCP servers (a
 * non-idempotent ledger server that counts every effect, and @modelcontextprotocol/server-memory),
 * against a running Sagaboard. Effects are counted in the servers' own files, per key.
 */
import { createHash } from "node:crypto";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { ToolRegistry } from "@/packages/client/src/saga/tools";
import { editTool } from "@/lib/server/tools/edit-tool";
import { requireUser, runWithSessionReader } from "@/lib/server/auth/current-user";
import { pullRunRevoke } from "@/lib/desks/revokes/pull-revoke";
import { createAgentToken } from "@/lib/server/tokens/create-agent-token";
import { createUser } from "@/lib/server/users/create-user";
import { useTestDatabase } from "../api/api-test-kit";
import { startTestServer, type TestServer } from "../support/http-server";
import { ADMIN, entries, gatewayKit, ledgerServer, REVIEWER, ROOT, textOf, type Result } from "./gateway-kit";
import { ReviewerEngine } from "@/packages/client/src/saga/reviewer-engine";

const getPrisma = useTestDatabase("mcp-gateway");
let server: TestServer;
const { dir: DIR, connect, connectHttp, approve, callApproved, team, cleanup } = gatewayKit(getPrisma, () => server.url);

beforeAll(async () => {
  server = await startTestServer();
}, 60_000);

afterAll(async () => {
  await server?.close();
  cleanup();
});

describe("MCP gateway", () => {
  it("lands tools/list in the tool table unreviewed, holds their calls, runs an approved call once and replays a re-sent one", async () => {
    const { prisma, ns, token, file } = await team("mcpledger");
    const s = await connect(token.secret, ledgerServer(file), { extra: ["--table-cache-ms", "300"] });
    try {
      const { tools } = await s.client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(["append_entry", "count_entries", "find_entry"]);
      const rows = await prisma.toolPolicy.findMany({ where: { namespace: ns }, orderBy: { name: "asc" } });
      expect(rows.map((r) => `${r.name}:${r.status}:${r.toolClass}`)).toEqual([`${ns}.append_entry:UNREVIEWED:IRREVERSIBLE`, `${ns}.count_entries:UNREVIEWED:IRREVERSIBLE`, `${ns}.find_entry:UNREVIEWED:IRREVERSIBLE`]);

      // Held: nothing reaches the server; the answer says why and where a person decides.
      const held = (await s.client.callTool({ name: "append_entry", arguments: { text: "hello" } })) as Result;
      expect(held.isError).toBe(true);
      expect(textOf(held)).toMatch(/held for a person's approval and was not sent/);
      expect(entries(file)).toHaveLength(0);

      await approve(held._meta!["dev.sagaboard/escalationId"] as string);
      const ran = (await s.client.callTool({ name: "append_entry", arguments: { text: "hello" } })) as Result;
      expect(ran.isError ?? false).toBe(false);
      expect(ran.structuredContent).toMatchObject({ entry: 1, text: "hello" });
      // The same call re-sent (a new request id, as after a broken stream): answered from the log.
      const again = (await s.client.callTool({ name: "append_entry", arguments: { text: "hello" } })) as Result;
      expect(again.structuredContent).toEqual(ran.structuredContent);
      const ledger = entries(file);
      expect(ledger).toHaveLength(1);
      const step = await prisma.step.findFirstOrThrow({ where: { tool: `${ns}.append_entry` } });
      expect(step).toMatchObject({ status: "CONFIRMED", stepKey: ledger[0]!.key });

      // A client key reused with other arguments is refused before anything is sent.
      const keyed = { "dev.sagaboard/idempotencyKey": "client-key-1" };
      await callApproved(s.client, "append_entry", { text: "keyed" }, {});
      const first = (await s.client.callTool({ name: "append_entry", arguments: { text: "keyed-2" }, _meta: keyed })) as Result;
      if (first._meta?.["dev.sagaboard/held"]) await approve(first._meta["dev.sagaboard/escalationId"] as string);
      await s.client.callTool({ name: "append_entry", arguments: { text: "keyed-2" }, _meta: keyed });
      const reused = (await s.client.callTool({ name: "append_entry", arguments: { text: "other words" }, _meta: keyed })) as Result;
      expect(textOf(reused)).toMatch(/Refused: the key client-key-1 was used for this tool with other arguments/);
      expect(entries(file).map((e) => e.text)).toEqual(["hello", "keyed", "keyed-2"]);

      // Reviewed as read-only by an admin: passed through, no step logged.
      const count = await prisma.toolPolicy.findUniqueOrThrow({ where: { name: `${ns}.count_entries` } });
      await editTool(prisma, { name: count.name, expectedVersion: count.policyVersion, changes: { status: "REVIEWED", toolClass: "PURE", owner: null, correctionSubject: null, correctionBody: null }, reason: "reads only" }, ADMIN);
      await new Promise((r) => setTimeout(r, 400)); // the gateway trusts its copy of the table for --table-cache-ms
      const counted = (await s.client.callTool({ name: "count_entries", arguments: {} })) as Result;
      expect(counted.structuredContent).toEqual({ count: 3 });
      expect(await prisma.step.count({ where: { tool: `${ns}.count_entries` } })).toBe(0);
    } finally {
      await s.close();
    }

    // The server is updated and count_entries now says it deletes: the review no longer covers it.
    const versions = async () => Object.fromEntries((await prisma.toolPolicy.findMany({ where: { namespace: ns } })).map((r) => [r.name.slice(ns.length + 1), `${r.status}:v${r.policyVersion}`]));
    const before = await versions();
    const changed = await connect(token.secret, ["env", "LEDGER_VARIANT=changed", ...ledgerServer(file)]);
    try {
      const after = await versions();
      expect(after.count_entries).toMatch(/^UNREVIEWED:v/);
      expect(after.count_entries).not.toBe(before.count_entries);
      expect(after.find_entry).toBe(before.find_entry); // declared again unchanged: no new version
      const heldAgain = (await changed.client.callTool({ name: "count_entries", arguments: {} })) as Result;
      expect(heldAgain._meta?.["dev.sagaboard/held"]).toBe(true);
    } finally {
      await changed.close();
    }
  }, 120_000);

  it("a team re-declaring a reviewed tool as PURE (with its token, or through a gateway's tools/list sync on restart) cannot take its calls out of the log", async () => {
    const { prisma, ns, token, file } = await team("mcppure");
    const s = await connect(token.secret, ledgerServer(file), { extra: ["--table-cache-ms", "300"] });
    try {
      await s.client.listTools();
      // The admin reviews append_entry as the gateway proposed it: IRREVERSIBLE, every call held.
      const declared = await prisma.toolPolicy.findUniqueOrThrow({ where: { name: `${ns}.append_entry` } });
      const reviewed = await editTool(prisma, { name: declared.name, expectedVersion: declared.policyVersion, changes: { status: "REVIEWED" } }, ADMIN);
      expect(reviewed).toMatchObject({ ok: true, tool: { toolClass: "IRREVERSIBLE", status: "REVIEWED" } });

      // The team's token re-declares it as PURE, keeping its arguments and description (a pure class change).
      const entry = declared.declared as { name: string; argsSchema: unknown; description: string };
      const attack = await fetch(`${server.url}/api/v1/tools/declarations`, {
        method: "POST",
        headers: { authorization: `Bearer ${token.secret}`, "content-type": "application/json" },
        body: JSON.stringify({ tools: [{ name: "append_entry", class: "PURE", lookup: false, argsSchema: entry.argsSchema, description: entry.description }] }),
      });
      expect(attack.status).toBe(200);
      expect(((await attack.json()) as { tools: { outcome: string; proposed: string[] }[] }).tools[0]).toMatchObject({ outcome: "recorded", proposed: expect.arrayContaining(["toolClass"]) });
      expect(await prisma.toolPolicy.findUniqueOrThrow({ where: { name: declared.name } })).toMatchObject({ toolClass: "IRREVERSIBLE", status: "REVIEWED", policyVersion: reviewed.ok ? reviewed.tool.policyVersion : 0 });
      await new Promise((r) => setTimeout(r, 400)); // past the gateway's --table-cache-ms

      const held = (await s.client.callTool({ name: "append_entry", arguments: { text: "not passed through" } })) as Result;
      expect(held._meta?.["dev.sagaboard/held"]).toBe(true);
      expect(entries(file)).toHaveLength(0);
    } finally {
      await s.close();
    }
    // A restarted gateway declares tools/list again: the reviewed row still stands.
    const again = await connect(token.secret, ledgerServer(file), { extra: ["--table-cache-ms", "300"] });
    try {
      await again.client.listTools();
      expect(await prisma.toolPolicy.findUniqueOrThrow({ where: { name: `${ns}.append_entry` } })).toMatchObject({ toolClass: "IRREVERSIBLE", status: "REVIEWED" });
      const held = (await again.client.callTool({ name: "append_entry", arguments: { text: "still held" } })) as Result;
      expect(held._meta?.["dev.sagaboard/held"]).toBe(true);
      expect(entries(file)).toHaveLength(0);
    } finally {
      await again.close();
    }
  });

  it("a held call run as an MCP task: the client holds a task handle at once, its status says it waits for a person, and after the approval the task's result is the one effect; a task cancelled while held is never sent", async () => {
    const { prisma, ns, token, file } = await team("mcptask");
    const s = await connect(token.secret, ledgerServer(file));
    // The held call's escalation, as the reviewer finds it in the queue (its title names the tool).
    const openHold = () => prisma.escalation.findFirstOrThrow({ where: { status: "OPEN", kind: "APPROVAL_REQUIRED", title: { contains: `${ns}.append_entry` } }, orderBy: { createdAt: "desc" } });
    try {
      const messages: string[] = [];
      let result: Result | null = null;
      for await (const message of s.client.experimental.tasks.callToolStream({ name: "append_entry", arguments: { text: "as a task" } }, CallToolResultSchema, { task: { ttl: 60_000 } })) {
        if (message.type === "taskCreated") messages.push(`created ${message.task.status}`);
        if (message.type === "taskStatus") {
          messages.push(`status ${message.task.status}`);
          if (/held for a person's approval/.test(message.task.statusMessage ?? "") && !messages.includes("approved")) {
            expect(entries(file)).toHaveLength(0); // nothing sent while it waits
            await approve((await openHold()).id);
            messages.push("approved");
          }
        }
        if (message.type === "result") result = message.result as Result;
        if (message.type === "error") throw message.error;
      }
      expect(messages[0]).toBe("created working");
      expect(messages).toContain("approved");
      expect(result?.structuredContent).toMatchObject({ text: "as a task" });
      expect(entries(file).map((l) => l.text)).toEqual(["as a task"]);
      // The identical call re-sent without a task is answered from the log.
      expect(((await s.client.callTool({ name: "append_entry", arguments: { text: "as a task" } })) as Result).structuredContent).toEqual(result?.structuredContent);

      // Cancelled while held: approved afterwards, it is still never sent.
      const stream = s.client.experimental.tasks.callToolStream({ name: "append_entry", arguments: { text: "cancelled task" } }, CallToolResultSchema, { task: { ttl: 60_000 } });
      const created = await stream.next();
      const taskId = (created.value as { task: { taskId: string } }).task.taskId;
      let held = (await s.client.experimental.tasks.getTask(taskId)).statusMessage ?? "";
      for (let i = 0; i < 50 && !/held/.test(held); i++) {
        await new Promise((r) => setTimeout(r, 100));
        held = (await s.client.experimental.tasks.getTask(taskId)).statusMessage ?? "";
      }
      expect(held).toMatch(/held for a person's approval/);
      await s.client.experimental.tasks.cancelTask(taskId);
      await stream.return(undefined);
      await approve((await openHold()).id);
      await new Promise((r) => setTimeout(r, 2_500)); // the task's wait polls the decision each second
      expect(entries(file).map((l) => l.text)).toEqual(["as a task"]);
    } finally {
      await s.close();
    }
  }, 60_000);

  it("a session that ends cleanly completes the run it started, once its calls are settled; one with a held call left waiting, or a named one, stays open", async () => {
    const { prisma, ns, token, file } = await team("mcpend");
    const runOf = async (text: string) => (await prisma.step.findFirstOrThrow({ where: { tool: `${ns}.append_entry`, args: { equals: { text } } }, include: { run: true } })).run;
    const statusSoon = async (runId: string, want: string) => {
      for (let i = 0; i < 50 && (await prisma.run.findUniqueOrThrow({ where: { id: runId } })).status !== want; i++) await new Promise((r) => setTimeout(r, 100));
      return (await prisma.run.findUniqueOrThrow({ where: { id: runId } })).status;
    };
    // stdio: the client closes the gateway's stdin.
    const s = await connect(token.secret, ledgerServer(file));
    await callApproved(s.client, "append_entry", { text: "done" });
    await s.close();
    const run = await runOf("done");
    expect(await statusSoon(run.id, "COMPLETED")).toBe("COMPLETED");
    expect(s.stderr()).toMatch(/completed \(the client's session ended\)/);

    // A held call nobody re-sent: the run stays open, and the gateway says why.
    const waiting = await connect(token.secret, ledgerServer(file));
    await callApproved(waiting.client, "append_entry", { text: "first" });
    const held = (await waiting.client.callTool({ name: "append_entry", arguments: { text: "still held" } })) as Result;
    expect(held._meta?.["dev.sagaboard/held"]).toBe(true);
    await waiting.close();
    await new Promise((r) => setTimeout(r, 500));
    expect((await runOf("first")).status).toBe("RUNNING");
    expect(waiting.stderr()).toMatch(/stays RUNNING: 1 held call\(s\) wait for a person/);

    // A named session is left open for the next gateway of that name.
    const named = await connect(token.secret, ledgerServer(file), { session: `${ns}-named` });
    await callApproved(named.client, "append_entry", { text: "named" });
    await named.close();
    await new Promise((r) => setTimeout(r, 500));
    expect((await runOf("named")).status).toBe("RUNNING");

    // Streamable HTTP: the client's DELETE of its session ends it.
    const overHttp = await connectHttp(token.secret, ledgerServer(file));
    await callApproved(overHttp.client, "append_entry", { text: "over http" });
    await overHttp.endSession();
    expect(await statusSoon((await runOf("over http")).id, "COMPLETED")).toBe("COMPLETED");
    await overHttp.close();
  }, 120_000);

  // A client's own timeout or abort, and kill -9 of the gateway at each crash point, are trials of the
  // fault matrix (tests/faults/mcp-gateway.test.ts), counted against this ledger.
  it("the gateway's deadline passes while the server works: UNKNOWN, then the late answer settles it; the re-sent call does not run again", async () => {
    const { prisma, ns, token, file } = await team("mcpslow");
    const s = await connect(token.secret, ledgerServer(file), { extra: ["--call-timeout-ms", "800", "--lookup-by-key", "append_entry=find_entry"] });
    try {
      // The gateway's deadline passes while the server is still working: UNKNOWN, then its late answer settles it.
      const slow = await callApproved(s.client, "append_entry", { text: "slow", delayMs: 2000 });
      expect(textOf(slow)).toMatch(/outcome of append_entry is unknown/);
      expect((await prisma.step.findFirstOrThrow({ where: { tool: `${ns}.append_entry` } })).status).toBe("UNKNOWN");
      await new Promise((r) => setTimeout(r, 2_000));
      const settled = (await s.client.callTool({ name: "append_entry", arguments: { text: "slow", delayMs: 2000 } })) as Result;
      expect(settled.structuredContent).toMatchObject({ text: "slow" });

      const steps = await prisma.step.findMany({ where: { tool: `${ns}.append_entry` }, orderBy: { stepIdx: "asc" } });
      expect(steps.map((st) => st.status)).toEqual(["CONFIRMED"]);
      const ledger = entries(file);
      expect(ledger.map((e) => e.text)).toEqual(["slow"]);
      expect(ledger.map((e) => e.key)).toEqual(steps.map((st) => st.stepKey));
    } finally {
      await s.close();
    }
  }, 120_000);

  it("@modelcontextprotocol/server-memory behind the gateway: a crash after create_entities is reconciled with open_nodes", async () => {
    const { prisma, ns, token } = await team("mcpmemory");
    const memory = path.join(DIR, `${ns}-memory.jsonl`);
    const upstream = ["node", path.join(ROOT, "node_modules/@modelcontextprotocol/server-memory/dist/index.js")];
    const env = { MEMORY_FILE_PATH: memory };
    const passMemory = ["--pass-env", "MEMORY_FILE_PATH"]; // the server gets only what the operator passes it
    const entity = { entities: [{ name: "Ada", entityType: "person", observations: ["ordered a kettle"] }] };
    const dying = await connect(token.secret, upstream, { session: ns, env: { ...env, SAGABOARD_MCP_CRASH_AT: "after_upstream" }, extra: passMemory });
    await expect(callApproved(dying.client, "create_entities", entity)).rejects.toThrow();
    await dying.close().catch(() => undefined);

    const s = await connect(token.secret, upstream, { session: ns, env, extra: passMemory });
    try {
      const answer = (await s.client.callTool({ name: "create_entities", arguments: entity })) as Result;
      expect(answer.structuredContent, textOf(answer)).toMatchObject({ entities: [{ name: "Ada", entityType: "person" }] });
    } finally {
      await s.close();
    }
    const lines = readFileSync(memory, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as { type: string; name?: string });
    expect(lines.filter((l) => l.type === "entity" && l.name === "Ada")).toHaveLength(1);
    const step = await prisma.step.findFirstOrThrow({ where: { tool: `${ns}.create_entities` } });
    expect(step.status).toBe("CONFIRMED");
    const events = await prisma.auditEvent.findMany({ where: { stepId: step.id }, select: { type: true } });
    expect(events.map((e) => e.type)).toContain("step.reconciled");
  }, 120_000);

  it("undo through the gateway: create_entities paired with delete_entities is pulled back from the dashboard, deleting only the names the call created", async () => {
    const { prisma, ns, token } = await team("mcpundo");
    const memory = path.join(DIR, `${ns}-memory.jsonl`);
    // Bob was in the graph before the agent came: the call will skip him, so its undo must not delete him.
    writeFileSync(memory, JSON.stringify({ type: "entity", name: "Bob", entityType: "person", observations: [] }) + "\n");
    const upstream = ["node", path.join(ROOT, "node_modules/@modelcontextprotocol/server-memory/dist/index.js")];
    const env = { MEMORY_FILE_PATH: memory };
    const passMemory = ["--pass-env", "MEMORY_FILE_PATH"]; // the server gets only what the operator passes it
    (await connect(token.secret, upstream, { env, extra: passMemory })).close(); // lands the tools

    // The admin pairs create_entities with delete_entities; a worker token lets the gateway run it.
    const row = await prisma.toolPolicy.findUniqueOrThrow({ where: { name: `${ns}.create_entities` } });
    await editTool(prisma, { name: row.name, expectedVersion: row.policyVersion, changes: { status: "REVIEWED", toolClass: "COMPENSATABLE", compensator: `${ns}.delete_entities`, revocationWindowSec: 86_400, correctionSubject: null, correctionBody: null }, reason: "delete_entities undoes it" }, ADMIN);
    const worker = await createAgentToken(prisma, { name: `${ns}-worker`, role: "worker", tools: [`${ns}.create_entities`], createdBy: "admin@example.com" });
    const s = await connect(token.secret, upstream, { env: { ...env, SAGABOARD_WORKER_TOKEN: worker.secret }, extra: passMemory });
    try {
      const created = (await s.client.callTool({ name: "create_entities", arguments: { entities: [{ name: "Ada", entityType: "person", observations: [] }, { name: "Bob", entityType: "person", observations: [] }] } })) as Result;
      expect(created.isError ?? false, textOf(created)).toBe(false);
      const step = await prisma.step.findFirstOrThrow({ where: { tool: `${ns}.create_entities` } });
      expect(step).toMatchObject({ status: "CONFIRMED", phase: "STAGING", compensation: { tool: `${ns}.delete_entities`, args: { entityNames: ["Ada"] } } });

      const reviewer = await createUser(prisma, { email: `${ns}@example.com`, name: "Rita", role: "reviewer", password: "correct horse battery", by: { type: "system", id: "test" } });
      await runWithSessionReader(async () => reviewer.id, async () => pullRunRevoke({ actor: await requireUser("read"), runId: step.runId, reason: "the agent made up a person" }));
      const deadline = Date.now() + 30_000;
      while ((await prisma.run.findUniqueOrThrow({ where: { id: step.runId } })).status !== "UNWOUND") {
        if (Date.now() > deadline) throw new Error(`the run was not unwound; the gateway said:\n${s.stderr()}`);
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(await prisma.step.findUniqueOrThrow({ where: { id: step.id } })).toMatchObject({ status: "COMPENSATED" });
      const names = readFileSync(memory, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as { type: string; name?: string }).filter((l) => l.type === "entity").map((l) => l.name);
      expect(names).toEqual(["Bob"]);
    } finally {
      await s.close();
    }
  }, 120_000);

  it("@modelcontextprotocol/server-filesystem behind the gateway: a crash after a write is reconciled by reading the file back; the session unwound from the dashboard leaves the sandbox byte-identical (file and tree hashes); a write that would create a file is held", async () => {
    const { prisma, ns, token } = await team("mcpfs");
    const box = path.join(DIR, `${ns}-box`);
    mkdirSync(path.join(box, "sub"), { recursive: true });
    writeFileSync(path.join(box, "notes.txt"), "first line\nsecond line\r\nthird: café ☕\n");
    writeFileSync(path.join(box, "plan.md"), "# Plan\n");
    writeFileSync(path.join(box, "sub", "todo.txt"), "buy milk\n");
    writeFileSync(path.join(box, "logo.bin"), Buffer.from(Array.from({ length: 256 }, (_, i) => i)));
    const start = treeHashes(box);
    const upstream = ["node", path.join(ROOT, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"), box];
    (await connect(token.secret, upstream)).close(); // lands the tools

    // The admin reviews the table: reads pass through; writes and moves are undone by the server's own tools.
    const review = async (tool: string, changes: Record<string, unknown>) => {
      const row = await prisma.toolPolicy.findUniqueOrThrow({ where: { name: `${ns}.${tool}` } });
      await editTool(prisma, { name: row.name, expectedVersion: row.policyVersion, changes: { status: "REVIEWED", correctionSubject: null, correctionBody: null, ...changes }, reason: "reviewed for the test" }, ADMIN);
    };
    for (const tool of ["read_text_file", "get_file_info", "list_directory"]) await review(tool, { toolClass: "PURE", owner: null });
    await review("write_file", { toolClass: "COMPENSATABLE", compensator: `${ns}.write_file`, revocationWindowSec: 86_400 });
    await review("move_file", { toolClass: "COMPENSATABLE", compensator: `${ns}.move_file`, revocationWindowSec: 86_400 });
    const worker = await createAgentToken(prisma, { name: `${ns}-worker`, role: "worker", tools: ["write_file", "move_file"].map((t) => `${ns}.${t}`), createdBy: "admin@example.com" });
    // The gateway dies after the server wrote plan.md and before the outcome was recorded.
    const planWrite = { path: path.join(box, "plan.md"), content: "# Plan v2\nship it\n" };
    const dying = await connect(token.secret, upstream, { session: ns, env: { SAGABOARD_MCP_CRASH_AT: "after_upstream" } });
    await expect(dying.client.callTool({ name: "write_file", arguments: planWrite })).rejects.toThrow();
    await dying.close().catch(() => undefined);
    expect(readFileSync(planWrite.path, "utf8")).toBe(planWrite.content);

    const s = await connect(token.secret, upstream, { session: ns, env: { SAGABOARD_WORKER_TOKEN: worker.secret } });
    try {
      const ok = async (name: string, args: Record<string, unknown>) => {
        const answer = (await s.client.callTool({ name, arguments: args })) as Result;
        expect(answer.isError ?? false, textOf(answer)).toBe(false);
        return answer;
      };
      // The client re-sends it: the lookup reads the file back and finds the write, so it is not written again.
      await ok("write_file", planWrite);
      const reconciled = await prisma.step.findFirstOrThrow({ where: { tool: `${ns}.write_file` } });
      expect((await prisma.auditEvent.findMany({ where: { stepId: reconciled.id }, select: { type: true } })).map((e) => e.type)).toContain("step.reconciled");
      await ok("write_file", { path: path.join(box, "notes.txt"), content: "first line\n2nd line\n" });
      await ok("move_file", { source: path.join(box, "sub", "todo.txt"), destination: path.join(box, "sub", "done.txt") });
      // The server has no delete: a write that creates a file cannot be undone by it, so it is held, not sent.
      const creating = (await s.client.callTool({ name: "write_file", arguments: { path: path.join(box, "new.txt"), content: "hello" } })) as Result;
      expect(creating._meta?.["dev.sagaboard/held"], textOf(creating)).toBe(true);
      expect(existsSync(path.join(box, "new.txt"))).toBe(false);
      const engine = new ReviewerEngine({ store: new PrismaSagaStore(prisma), registry: new ToolRegistry() });
      await engine.decideHeldCall(creating._meta!["dev.sagaboard/escalationId"] as string, { approve: false, actor: REVIEWER });
      expect(treeHashes(box)).not.toEqual(start);

      const steps = await prisma.step.findMany({ where: { tool: { startsWith: `${ns}.` } }, orderBy: { stepIdx: "asc" } });
      expect(steps.map((st) => `${st.tool.slice(ns.length + 1)}:${st.status}`)).toEqual(["write_file:CONFIRMED", "write_file:CONFIRMED", "move_file:CONFIRMED"]);
      expect(steps[0]!.compensation).toEqual({ tool: `${ns}.write_file`, args: { path: planWrite.path, content: "# Plan\n" } });
      expect(steps[1]!.compensation).toEqual({ tool: `${ns}.write_file`, args: { path: path.join(box, "notes.txt"), content: "first line\nsecond line\r\nthird: café ☕\n" } });

      // The run fails late and a reviewer pulls the whole session back from the dashboard.
      const reviewer = await createUser(prisma, { email: `${ns}@example.com`, name: "Rita", role: "reviewer", password: "correct horse battery", by: { type: "system", id: "test" } });
      await runWithSessionReader(async () => reviewer.id, async () => pullRunRevoke({ actor: await requireUser("read"), runId: steps[0]!.runId, reason: "the agent rewrote the wrong project" }));
      const deadline = Date.now() + 30_000;
      while ((await prisma.run.findUniqueOrThrow({ where: { id: steps[0]!.runId } })).status !== "UNWOUND") {
        if (Date.now() > deadline) throw new Error(`the run was not unwound; the gateway said:\n${s.stderr()}`);
        await new Promise((r) => setTimeout(r, 250));
      }
      const after = await prisma.step.findMany({ where: { runId: steps[0]!.runId }, orderBy: { stepIdx: "asc" } });
      expect(after.map((st) => st.status)).toEqual(["COMPENSATED", "COMPENSATED", "COMPENSATED"]);
      // Undone in reverse: the move first, the plan's write last.
      const confirmed = await prisma.auditEvent.findMany({ where: { type: "compensation.confirmed", stepId: { in: after.map((st) => st.id) } }, orderBy: { seq: "asc" }, select: { stepId: true } });
      expect(confirmed.map((e) => after.findIndex((st) => st.id === e.stepId))).toEqual([2, 1, 0]);
      expect(treeHashes(box)).toEqual(start);
    } finally {
      await s.close();
    }
  }, 120_000);
});

/** Every file and folder under `root` with its sha256 (folders: "dir"), sorted, plus one hash of the whole tree. */
function treeHashes(root: string): { tree: string; files: Record<string, string> } {
  const files: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const full = path.join(dir, name);
      const rel = path.relative(root, full);
      if (statSync(full).isDirectory()) {
        files[rel] = "dir";
        walk(full);
      } else files[rel] = createHash("sha256").update(readFileSync(full)).digest("hex");
    }
  };
  walk(root);
  return { tree: createHash("sha256").update(JSON.stringify(Object.entries(files))).digest("hex"), files };
}
