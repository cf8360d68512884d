/**
 * The MCP gateway's fault matrix: each fault is played for N trials between a real MCP client and
 * the non-idempotent ledger server (which appends a line per real effect, stamped with the key the
 * gateway sent), and counted against that ledger and the saga log, one printed line per fault:
 *
 *   fault-matrix: mcp:<fault> store=<sqlite|postgresql> trials=N duplicates=0 lost=0 unknown_at_rest=0 escalated=K unapproved_irreversible=0 cancels_unknown=C/C
 *
 * duplicates: a logical call (one text) with more than one line, or a line whose key is no step's
 * (an effect without an intent); lost: a call answered as done with no line; unknown_at_rest: a step
 * still INTENDED or UNKNOWN when the fault is over; escalated: escalations a person must settle;
 * unapproved_irreversible: effects of a call that cannot be undone (an unreviewed tool counts as one)
 * whose step no person approved;
 * cancels_unknown: of the calls the client gave up on, how many the log recorded as UNKNOWN (never
 * FAILED) before they were settled.
 *
 * Trials: one per fault in CI; SAGABOARD_FAULT_MATRIX_TRIALS when set, at most 10 (real processes).
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PrismaClient } from "@/generated/prisma";
import { requireUser, runWithSessionReader } from "@/lib/server/auth/current-user";
import { pullStepRevoke } from "@/lib/desks/revokes/pull-revoke";
import { createAgentToken } from "@/lib/server/tokens/create-agent-token";
import { editTool } from "@/lib/server/tools/edit-tool";
import { createUser } from "@/lib/server/users/create-user";
import { useTestDatabase } from "../api/api-test-kit";
import { startTestServer, type TestServer } from "../support/http-server";
import { ADMIN, CLIENT_SECRET, entries, gatewayKit, ledgerServer, OTHER_CLIENT_SECRET, textOf, type Result } from "../mcp/gateway-kit";
import { CRASH_POINTS, type CrashPoint } from "@/packages/mcp-gateway/src/gateway";
import { MATRIX_TRIALS, matrixLine, recordMatrixLine } from "./fault-matrix";

const getPrisma = useTestDatabase("mcp-fault-matrix");
let server: TestServer;
const kit = gatewayKit(getPrisma, () => server.url);
// Real processes (a gateway, a server) per trial: one in CI unless SAGABOARD_FAULT_MATRIX_TRIALS asks,
// and at most 10 even when the nightly run asks for more.
const TRIALS = process.env.SAGABOARD_FAULT_MATRIX_TRIALS ? Math.min(10, MATRIX_TRIALS) : 1;
const LOOKUP = ["--lookup-by-key", "append_entry=find_entry"];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  server = await startTestServer();
}, 60_000);

afterAll(async () => {
  await server?.close();
  kit.cleanup();
});

interface Trial {
  /** The call's text: one logical call. */
  text: string;
  /** The client was answered with the call's result. */
  answered: boolean;
  /** The client gave up on the call (a timeout or an abort) at least once. */
  gaveUp: boolean;
}

/** What the log and the ledger hold when the gateway dies at each crash point. */
const AT_CRASH = {
  before_intent: { status: "none", effects: 0 },
  after_intent: { status: "INTENDED", effects: 0 },
  after_upstream: { status: "INTENDED", effects: 1 },
  after_outcome: { status: "CONFIRMED", effects: 1 },
  after_unknown: { status: "UNKNOWN", effects: 1 },
} as const;

/** Counts one fault's trials against the ledger and the saga log, prints its line, and returns the tally. */
async function tally(fault: string, ns: string, file: string, trials: Trial[]) {
  const prisma = await getPrisma();
  const lines = entries(file);
  const steps = await prisma.step.findMany({ where: { tool: { in: [`${ns}.append_entry`, `${ns}.publish_entry`] } } });
  const keys = new Set(steps.map((st) => st.stepKey));
  const byText = (text: string) => lines.filter((l) => l.text === text).length;
  const duplicates = trials.reduce((n, t) => n + Math.max(0, byText(t.text) - 1), 0) + lines.filter((l) => !l.key || !keys.has(l.key)).length;
  const lost = trials.filter((t) => t.answered && byText(t.text) === 0).length;
  const unknownAtRest = steps.filter((st) => st.status === "INTENDED" || st.status === "UNKNOWN").length;
  const escalated = await prisma.escalation.count({ where: { runId: { in: [...new Set(steps.map((st) => st.runId))] }, status: "OPEN", kind: { not: "APPROVAL_REQUIRED" } } });
  const gaveUp = trials.filter((t) => t.gaveUp);
  const unknownEvents = await prisma.auditEvent.findMany({ where: { type: "step.unknown", stepId: { in: steps.map((st) => st.id) } }, select: { stepId: true } });
  const wentUnknown = new Set(unknownEvents.map((e) => steps.find((st) => st.id === e.stepId)?.args).map((a) => (a as { text?: string } | undefined)?.text));
  const cancelsUnknown = gaveUp.filter((t) => wentUnknown.has(t.text)).length;
  const failed = steps.filter((st) => st.status === "FAILED").length;
  // An effect of a call that cannot be undone (an unreviewed tool counts as one) with no approval on its step.
  const stepOfKey = new Map(steps.map((st) => [st.stepKey, st]));
  const unapproved = lines.filter((l) => l.key && stepOfKey.get(l.key)?.toolClass === "IRREVERSIBLE" && !stepOfKey.get(l.key)?.approvalId).length;
  const figures = { duplicateEffects: duplicates, lostIntents: lost, unknownAtRest, unapprovedIrreversible: unapproved, failedCompensations: 0, escalatedCompensations: 0, rows: steps.length, effects: lines.length, violations: [] };
  recordMatrixLine(matrixLine({ name: `mcp:${fault}`, trials: trials.length, figures, escalated }) + ` unapproved_irreversible=${unapproved}` + (gaveUp.length > 0 ? ` cancels_unknown=${cancelsUnknown}/${gaveUp.length}` : ""));
  return { duplicates, lost, unknownAtRest, unapproved, escalated, cancels: gaveUp.length, cancelsUnknown, failed };
}

/** The ledger server with its compensator (remove_entry) listed. */
const undoableLedger = (file: string) => ["env", "LEDGER_UNDO=1", ...ledgerServer(file)];

/** The removals remove_entry made (a line per real call), by the key of the entry each removed. */
function removals(file: string): string[] {
  try {
    return readFileSync(`${file}.removed`, "utf8").split("\n").filter(Boolean).map((l) => (JSON.parse(l) as { removes: string }).removes);
  } catch {
    return [];
  }
}

/** The ledger server with its irreversible tool (publish_entry) and append_entry's compensator listed. */
const publishingLedger = (file: string) => ["env", "LEDGER_PUBLISH=1", ...undoableLedger(file)];

/** What an admin does on the tool page: publish_entry reviewed as IRREVERSIBLE (it cannot be taken back). */
async function reviewPublishEntry(prisma: PrismaClient, ns: string): Promise<void> {
  const row = await prisma.toolPolicy.findUniqueOrThrow({ where: { name: `${ns}.publish_entry` } });
  await editTool(prisma, { name: row.name, expectedVersion: row.policyVersion, changes: { status: "REVIEWED", toolClass: "IRREVERSIBLE" }, reason: "the watchers see it at once" }, ADMIN);
}

/** What an admin does on the tool page: append_entry reviewed as COMPENSATABLE, undone by remove_entry, pullable for a day. */
async function reviewAppendEntry(prisma: PrismaClient, ns: string): Promise<void> {
  const row = await prisma.toolPolicy.findUniqueOrThrow({ where: { name: `${ns}.append_entry` } });
  await editTool(
    prisma,
    { name: row.name, expectedVersion: row.policyVersion, changes: { status: "REVIEWED", toolClass: "COMPENSATABLE", compensator: `${ns}.remove_entry`, revocationWindowSec: 86_400, correctionSubject: null, correctionBody: null }, reason: "remove_entry undoes it" },
    ADMIN,
  );
}

/** Re-sends a call (a new request id each time) until the log answers it, as a client would after losing its answer. */
async function resendUntilAnswered(call: () => Promise<Result>, label: string): Promise<Result> {
  for (let i = 0; i < 20; i++) {
    const answer = await call();
    if (!answer.isError) return answer;
    await sleep(400); // still unknown: the late answer or the lookup has not settled it yet
    if (i === 19) throw new Error(`${label} was never answered: ${textOf(answer)}`);
  }
  throw new Error("unreachable");
}

/**
 * One kill row: for each crash point, a gateway (stdio, or serving streamable HTTP) dies there by
 * kill -9 during a call; the test checks the log and the ledger show it died where it says, then a
 * restarted gateway of the same session name settles the call re-sent by key. Counted as one row.
 */
async function killAndRestart(fault: string, transport: "stdio" | "http", points: readonly CrashPoint[], named = true) {
  const { prisma, ns, token, file } = await kit.team(transport === "http" ? "mxhttpkill" : "mxkill");
  (await kit.connect(token.secret, undoableLedger(file), { extra: LOOKUP })).close(); // lands the tools
  await reviewAppendEntry(prisma, ns); // forwarded without a hold, so each crash point is on the call's own path
  // Named: the gateway's --session. Not named (the default setup): the restarted gateway finds the
  // client's run again in its state directory.
  const connect = ({ session, ...options }: { session: string; extra: string[]; env?: Record<string, string> }) =>
    transport === "http" ? kit.connectHttp(token.secret, undoableLedger(file), named ? { session, ...options } : options) : kit.connect(token.secret, undoableLedger(file), named ? { session, ...options } : options);
  const trials: Trial[] = [];
  for (let t = 0; t < TRIALS; t++) {
    for (const crashAt of points) {
      const text = `${transport} ${crashAt} ${t}`;
      // after_unknown: the gateway's own deadline passes while the server works, so it records UNKNOWN first.
      const args = crashAt === "after_unknown" ? { text, delayMs: 800 } : { text };
      const session = `${ns}-${t}`;
      const dying = await connect({ session, extra: [...LOOKUP, "--call-timeout-ms", "300"], env: { SAGABOARD_MCP_CRASH_AT: crashAt } });
      await expect(dying.client.callTool({ name: "append_entry", arguments: args })).rejects.toThrow();
      if ("exited" in dying) await dying.exited;
      await dying.close().catch(() => undefined);
      // Where the gateway died, as the log and the ledger show it: each point is really reached.
      const step = await prisma.step.findFirst({ where: { tool: `${ns}.append_entry`, args: { equals: args } } });
      const effects = entries(file).filter((l) => l.text === text).length;
      expect({ crashAt, status: step?.status ?? "none", effects }).toEqual({ crashAt, ...AT_CRASH[crashAt] });
      const restarted = await connect({ session, extra: LOOKUP });
      try {
        const answer = await resendUntilAnswered(() => restarted.client.callTool({ name: "append_entry", arguments: args }) as Promise<Result>, text);
        trials.push({ text, answered: answer.structuredContent?.text === text, gaveUp: false });
      } finally {
        await restarted.close();
      }
    }
  }
  const result = await tally(fault, ns, file, trials);
  expect(result).toMatchObject({ duplicates: 0, lost: 0, unknownAtRest: 0, unapproved: 0, escalated: 0 });
  expect(trials.every((tr) => tr.answered)).toBe(true);
  if (!named) {
    // Each session that ended cleanly completed its run: nothing is left RUNNING for a person to find.
    const open = await prisma.run.count({ where: { agent: ns, status: { in: ["RUNNING", "AWAITING_PIVOT", "COMMITTING"] } } });
    const runs = await prisma.run.count({ where: { agent: ns } });
    recordMatrixLine(`fault-matrix: mcp:${fault} orphaned_runs=${open} runs=${runs} upstream_calls_per_write=${(entries(file).length / trials.length).toFixed(2)}`);
    expect(open).toBe(0);
    expect(entries(file).length).toBe(trials.length); // one effect a write: the restart sent nothing twice
  }
}

describe("MCP gateway fault matrix", () => {
  it("a call re-sent with a new request id after its answer was lost: answered from the log, one effect", async () => {
    const { ns, token, file } = await kit.team("mxresend");
    const s = await kit.connect(token.secret, ledgerServer(file));
    const trials: Trial[] = [];
    try {
      for (let t = 0; t < TRIALS; t++) {
        const text = `resend ${t}`;
        const first = await kit.callApproved(s.client, "append_entry", { text });
        for (let again = 0; again < 3; again++) expect((await s.client.callTool({ name: "append_entry", arguments: { text } })).structuredContent).toEqual(first.structuredContent);
        trials.push({ text, answered: !first.isError, gaveUp: false });
      }
    } finally {
      await s.close();
    }
    expect(await tally("resend-new-id", ns, file, trials)).toMatchObject({ duplicates: 0, lost: 0, unknownAtRest: 0, unapproved: 0, escalated: 0 });
  }, 120_000);

  it("the client times out on a slow call the server completes (60 s on a 90 s operation, scaled down), or aborts it mid-call: UNKNOWN, settled by key, never run twice", async () => {
    const { ns, token, file } = await kit.team("mxcancel");
    const s = await kit.connect(token.secret, ledgerServer(file), { extra: LOOKUP });
    const trials: Trial[] = [];
    try {
      for (let t = 0; t < TRIALS; t++) {
        for (const how of ["timeout", "abort"] as const) {
          const text = `${how} ${t}`;
          const args = { text, delayMs: 1200 };
          const held = (await s.client.callTool({ name: "append_entry", arguments: args })) as Result;
          if (held._meta?.["dev.sagaboard/held"]) await kit.approve(held._meta["dev.sagaboard/escalationId"] as string);
          const abort = new AbortController();
          if (how === "abort") setTimeout(() => abort.abort(), 300);
          const options = how === "timeout" ? { timeout: 600 } : { signal: abort.signal };
          const gaveUp = await s.client.callTool({ name: "append_entry", arguments: args }, undefined, options).then(
            () => false,
            () => true,
          );
          const answer = await resendUntilAnswered(() => s.client.callTool({ name: "append_entry", arguments: args }) as Promise<Result>, text);
          trials.push({ text, answered: answer.structuredContent?.text === text, gaveUp });
        }
      }
    } finally {
      await s.close();
    }
    const result = await tally("client-timeout-or-abort", ns, file, trials);
    expect(result).toMatchObject({ duplicates: 0, lost: 0, unknownAtRest: 0, unapproved: 0, escalated: 0, failed: 0 });
    expect(result.cancels).toBe(trials.length);
    expect(result.cancelsUnknown).toBe(result.cancels);
  }, 180_000);

  it("kill -9 of the gateway at each point of a call (before the intent, after it, after the effect, after the outcome, after an UNKNOWN), then a restart: the session's run is joined and each call settled by key, one effect", async () => {
    await killAndRestart("kill-9-and-restart", "stdio", CRASH_POINTS);
  }, 240_000);

  it("over streamable HTTP, the link dropped after the effect (no cancel sent) and the call re-sent with a new request id: answered from the log, one effect", async () => {
    const { prisma, ns, token, file } = await kit.team("mxhttpdrop");
    (await kit.connect(token.secret, undoableLedger(file), { extra: LOOKUP })).close();
    await reviewAppendEntry(prisma, ns);
    const s = await kit.connectHttp(token.secret, undoableLedger(file), { extra: LOOKUP });
    const trials: Trial[] = [];
    try {
      for (let t = 0; t < TRIALS; t++) {
        const text = `http dropped ${t}`;
        const args = { text, delayMs: 600 };
        // The server appends, then works on for 600 ms; the response stream breaks at 200 ms.
        const lost = await s.post("tools/call", { name: "append_entry", arguments: args }, 200);
        expect(lost.dropped).toBe(true);
        const answer = await resendUntilAnswered(() => s.client.callTool({ name: "append_entry", arguments: args }) as Promise<Result>, text);
        expect(await s.client.callTool({ name: "append_entry", arguments: args })).toMatchObject({ structuredContent: answer.structuredContent });
        // Not a cancel: the gateway still hears the server's answer and records it, so nothing goes UNKNOWN.
        trials.push({ text, answered: answer.structuredContent?.text === text, gaveUp: false });
      }
    } finally {
      await s.close();
    }
    const result = await tally("http-link-dropped-resend", ns, file, trials);
    expect(result).toMatchObject({ duplicates: 0, lost: 0, unknownAtRest: 0, unapproved: 0, escalated: 0, failed: 0 });
  }, 120_000);

  it("over streamable HTTP, kill -9 of the gateway after the effect and after an UNKNOWN, then a restart: the client's new session joins the run by its name and each call is settled by key, one effect", async () => {
    await killAndRestart("http-kill-9-and-restart", "http", ["after_upstream", "after_unknown"]);
  }, 180_000);

  it("a changed tools/list: a reviewed tool whose definition changes is held again, and nothing reaches the server until a person lets it", async () => {
    const { prisma, ns, token, file } = await kit.team("mxlist");
    (await kit.connect(token.secret, undoableLedger(file), { extra: LOOKUP })).close(); // lands the tools, with the lookup by key
    await reviewAppendEntry(prisma, ns);
    const trials: Trial[] = [];
    const reviewed = await kit.connect(token.secret, undoableLedger(file), { extra: LOOKUP });
    try {
      for (let t = 0; t < TRIALS; t++) {
        const text = `reviewed ${t}`;
        const ran = (await reviewed.client.callTool({ name: "append_entry", arguments: { text } })) as Result;
        expect(ran.isError ?? false, textOf(ran)).toBe(false); // reviewed and undoable: not held
        trials.push({ text, answered: ran.structuredContent?.text === text, gaveUp: false });
      }
    } finally {
      await reviewed.close();
    }
    // The server is updated: append_entry now says it also emails. The review no longer covers it.
    const changed = await kit.connect(token.secret, ["env", "LEDGER_APPEND_VARIANT=changed", ...undoableLedger(file)], { extra: LOOKUP });
    try {
      expect((await prisma.toolPolicy.findUniqueOrThrow({ where: { name: `${ns}.append_entry` } })).status).toBe("UNREVIEWED");
      for (let t = 0; t < TRIALS; t++) {
        const text = `changed ${t}`;
        const held = (await changed.client.callTool({ name: "append_entry", arguments: { text } })) as Result;
        expect(held._meta?.["dev.sagaboard/held"], textOf(held)).toBe(true);
        expect(held._meta?.["dev.sagaboard/reason"]).toBe("UNREVIEWED");
        expect(entries(file).filter((l) => l.text === text)).toHaveLength(0);
        await kit.approve(held._meta!["dev.sagaboard/escalationId"] as string);
        const ran = (await changed.client.callTool({ name: "append_entry", arguments: { text } })) as Result;
        expect((await changed.client.callTool({ name: "append_entry", arguments: { text } })).structuredContent).toEqual(ran.structuredContent);
        trials.push({ text, answered: ran.structuredContent?.text === text, gaveUp: false });
      }
    } finally {
      await changed.close();
    }
    expect(await tally("tools-list-changed", ns, file, trials)).toMatchObject({ duplicates: 0, lost: 0, unknownAtRest: 0, unapproved: 0, escalated: 0 });
  }, 120_000);

  it("a revoke mid-run: a reviewer pulls one effect back while the client goes on calling; that effect is removed once, the others stay, nothing runs twice", async () => {
    const { prisma, ns, token, file } = await kit.team("mxrevoke");
    (await kit.connect(token.secret, undoableLedger(file), { extra: LOOKUP })).close();
    await reviewAppendEntry(prisma, ns);
    const worker = await createAgentToken(prisma, { name: `${ns}-worker`, role: "worker", tools: [`${ns}.append_entry`], createdBy: "admin@example.com" });
    const reviewer = await createUser(prisma, { email: `${ns}@example.com`, name: "Rita", role: "reviewer", password: "correct horse battery", by: { type: "system", id: "test" } });
    const s = await kit.connect(token.secret, undoableLedger(file), { extra: LOOKUP, env: { SAGABOARD_WORKER_TOKEN: worker.secret } });
    const trials: Trial[] = [];
    const pulled: string[] = [];
    try {
      for (let t = 0; t < TRIALS; t++) {
        const call = async (text: string) => {
          const ran = (await s.client.callTool({ name: "append_entry", arguments: { text } })) as Result;
          expect(ran.isError ?? false, textOf(ran)).toBe(false);
          trials.push({ text, answered: ran.structuredContent?.text === text, gaveUp: false });
        };
        await call(`kept ${t}`);
        await call(`pulled ${t}`);
        const step = await prisma.step.findFirstOrThrow({ where: { tool: `${ns}.append_entry`, args: { equals: { text: `pulled ${t}` } } } });
        // The reviewer pulls it back while the client goes on: the next call runs while the undo is under way.
        await runWithSessionReader(async () => reviewer.id, async () => pullStepRevoke({ actor: await requireUser("read"), stepId: step.id, reason: "the agent appended the wrong entry" }));
        await call(`after ${t}`);
        const deadline = Date.now() + 30_000;
        while ((await prisma.step.findUniqueOrThrow({ where: { id: step.id } })).status !== "COMPENSATED") {
          if (Date.now() > deadline) throw new Error(`the pulled step was not compensated; the gateway said:\n${s.stderr()}`);
          await sleep(250);
        }
        pulled.push(step.stepKey);
      }
    } finally {
      await s.close();
    }
    // Exactly the pulled entries were removed, each once; the ledger's appends are counted as in every row.
    expect(removals(file).sort()).toEqual([...pulled].sort());
    expect(await tally("revoke-mid-run", ns, file, trials)).toMatchObject({ duplicates: 0, lost: 0, unknownAtRest: 0, unapproved: 0, escalated: 0 });
  }, 120_000);

  it("the plan changed after approval: a reworded irreversible call is not sent under the approval of the original; each call a person let through runs once, with the arguments approved", async () => {
    const { prisma, ns, token, file } = await kit.team("mxplan");
    (await kit.connect(token.secret, publishingLedger(file), { extra: LOOKUP })).close(); // lands the tools
    await reviewAppendEntry(prisma, ns);
    await reviewPublishEntry(prisma, ns);
    const trials: Trial[] = [];
    const published = () => entries(file).filter((l) => l.text.startsWith("publish"));
    for (let t = 0; t < TRIALS; t++) {
      const s = await kit.connect(token.secret, publishingLedger(file), { extra: LOOKUP });
      const call = (name: string, args: Record<string, unknown>) => s.client.callTool({ name, arguments: args }) as Promise<Result>;
      try {
        const staged = await call("append_entry", { text: `staged ${t}` });
        expect(staged.isError ?? false, textOf(staged)).toBe(false);
        trials.push({ text: `staged ${t}`, answered: true, gaveUp: false });
        // The irreversible call after a staged one asks for the pivot; the reviewer approves the plan as shown.
        const original = { text: `publish ${t}` };
        const asked = await call("publish_entry", original);
        expect(asked._meta?.["dev.sagaboard/reason"], textOf(asked)).toBe("PIVOT_PENDING");
        await kit.approvePivot(asked._meta!["dev.sagaboard/pivotId"] as string);
        // The model rewords the call after the approval: not the plan a person approved, so held, not sent.
        const changed = { text: `publish ${t}, reworded` };
        const reworded = await call("publish_entry", changed);
        expect(reworded._meta?.["dev.sagaboard/reason"], textOf(reworded)).toBe("NOT_IN_PLAN");
        expect(published().map((l) => l.text)).not.toContain(changed.text);
        // The approved call runs once, with the arguments approved (not marked as edited: nobody edited them).
        const ran = await call("publish_entry", original);
        expect(ran.structuredContent, textOf(ran)).toEqual({ published: original.text });
        expect(ran._meta?.["dev.sagaboard/editedByReviewer"]).toBeUndefined();
        expect(await call("publish_entry", original)).toMatchObject({ structuredContent: ran.structuredContent });
        trials.push({ text: original.text, answered: true, gaveUp: false });
        // The reworded call, re-sent, is still held on the same escalation; once a person approves it, it runs once.
        const heldAgain = await call("publish_entry", changed);
        expect(heldAgain._meta?.["dev.sagaboard/escalationId"]).toBe(reworded._meta?.["dev.sagaboard/escalationId"]);
        expect(published().map((l) => l.text)).not.toContain(changed.text);
        await kit.approve(reworded._meta!["dev.sagaboard/escalationId"] as string);
        const ranChanged = await call("publish_entry", changed);
        expect(ranChanged.structuredContent, textOf(ranChanged)).toEqual({ published: changed.text });
        expect(await call("publish_entry", changed)).toMatchObject({ structuredContent: ranChanged.structuredContent });
        trials.push({ text: changed.text, answered: true, gaveUp: false });
      } finally {
        await s.close();
      }
    }
    expect(await tally("plan-changed-after-approval", ns, file, trials)).toMatchObject({ duplicates: 0, lost: 0, unknownAtRest: 0, unapproved: 0, escalated: 0 });
  }, 120_000);

  it("an approval that comes late while the client keeps re-sending the held call: nothing runs before it, exactly one effect after", async () => {
    const { ns, token, file } = await kit.team("mxlate");
    const s = await kit.connect(token.secret, ledgerServer(file));
    const trials: Trial[] = [];
    try {
      for (let t = 0; t < TRIALS; t++) {
        const text = `late ${t}`;
        const resend = () => s.client.callTool({ name: "append_entry", arguments: { text } }) as Promise<Result>;
        const held = await resend();
        const escalationId = held._meta?.["dev.sagaboard/escalationId"];
        // The client retries five times while nobody decides (ten minutes in production): each is held again, on the same escalation.
        for (let i = 0; i < 5; i++) expect((await resend())._meta?.["dev.sagaboard/escalationId"]).toBe(escalationId);
        expect(entries(file).filter((l) => l.text === text)).toHaveLength(0);
        await kit.approve(escalationId as string);
        const ran = await resend();
        expect(await resend()).toEqual(ran);
        trials.push({ text, answered: ran.structuredContent?.text === text, gaveUp: false });
      }
    } finally {
      await s.close();
    }
    expect(await tally("approval-late", ns, file, trials)).toMatchObject({ duplicates: 0, lost: 0, unknownAtRest: 0, unapproved: 0, escalated: 0 });
  }, 120_000);
});

/** The processes `pid` started (its children), from /proc. */
function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((task) => readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").split(" ").filter(Boolean).map(Number));
  } catch {
    return [];
  }
}

/** A process's environment as the kernel holds it (/proc/<pid>/environ). */
function environOf(pid: number): string[] {
  return readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").filter(Boolean);
}

describe("MCP gateway fault matrix: who may use it, and what it keeps to itself", () => {
  it("over HTTP only its own clients get in: no credential, a wrong one, a foreign Origin, Origin null, a rebinding Host, another client's session, an oversize or malformed body are refused with a JSON-RPC error, and nothing is logged", async () => {
    const { prisma, ns, token, file } = await kit.team("mxauth");
    const s = await kit.connectHttp(token.secret, ledgerServer(file));
    const url = `http://127.0.0.1:${s.port}/mcp`;
    const init = (extra: Record<string, string> = {}) => ({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "intruder", version: "1" } },
      ...extra,
    });
    // node:http, not fetch: fetch will not send a Host header of the caller's choosing (a rebinding page's browser does).
    const send = (headers: Record<string, string>, body: string = JSON.stringify(init())) =>
      new Promise<{ status: number; body: { error?: { code: number; message: string } } | null; wwwAuthenticate: string | null }>((resolve, reject) => {
        const req = httpRequest(url, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers } }, (res) => {
          let text = "";
          res.on("data", (d: Buffer) => (text += d.toString()));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text ? (JSON.parse(text) as { error?: { code: number; message: string } }) : null, wwwAuthenticate: (res.headers["www-authenticate"] as string | undefined) ?? null }));
        });
        req.on("error", reject);
        req.end(body);
      });
    const bearer = { authorization: `Bearer ${CLIENT_SECRET}` };
    try {
      await s.client.listTools(); // the real client is in
      const runsBefore = await prisma.run.count({ where: { agent: ns } });
      const attempts = [
        { what: "no credential", answer: await send({}), status: 401 },
        { what: "a wrong token", answer: await send({ authorization: "Bearer not-one-of-ours-0123456789" }), status: 401 },
        { what: "Origin http://evil.example", answer: await send({ ...bearer, origin: "http://evil.example" }), status: 403 },
        { what: "Origin null", answer: await send({ ...bearer, origin: "null" }), status: 403 },
        { what: "Host rebind.evil.example", answer: await send({ ...bearer, host: `rebind.evil.example:${s.port}` }), status: 403 },
        { what: "another client's session", answer: await send({ authorization: `Bearer ${OTHER_CLIENT_SECRET}`, "mcp-session-id": (s.client.transport as { sessionId?: string }).sessionId ?? "" }, JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" })), status: 403 },
        { what: "an unknown session", answer: await send({ ...bearer, "mcp-session-id": "no-such-session" }, JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/list" })), status: 404 },
        { what: "an oversize body", answer: await send(bearer, JSON.stringify(init({ padding: "x".repeat(1_100_000) }))), status: 413 },
        { what: "a body that is not JSON", answer: await send(bearer, "{ not json"), status: 400 },
      ];
      for (const a of attempts) {
        expect(a.answer.status, a.what).toBe(a.status);
        expect(a.answer.body?.error?.message, a.what).toEqual(expect.any(String));
        expect(typeof a.answer.body?.error?.code, a.what).toBe("number");
      }
      expect(attempts[0]!.answer.wwwAuthenticate).toMatch(/^Bearer/);
      // A tool the server does not list: a JSON-RPC error (-32602), nothing logged as a call.
      await expect(s.client.callTool({ name: "drop_tables", arguments: {} })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining("Unknown tool drop_tables") });
      expect(await prisma.run.count({ where: { agent: ns } })).toBe(runsBefore);
      expect(await prisma.step.count({ where: { tool: { startsWith: `${ns}.` } } })).toBe(0);
      recordMatrixLine(`fault-matrix: mcp:http-who-may-connect store=${process.env.SAGABOARD_TEST_PG === "1" ? "postgresql" : "sqlite"} trials=${attempts.length} refused=${attempts.filter((a) => a.answer.status === a.status).length}/${attempts.length} runs_created=0 calls_logged=0`);
    } finally {
      await s.close();
    }
  }, 120_000);

  it("the token never leaves the gateway: the real server's environment (read from /proc) holds no Sagaboard token, only what the operator passes", async () => {
    const { token, file } = await kit.team("mxenv");
    const s = await kit.connect(token.secret, ledgerServer(file), { extra: ["--pass-env", "LEDGER_NOTE"], env: { LEDGER_NOTE: "passed on purpose", SAGABOARD_WORKER_TOKEN: "sgb_worker-secret-never-to-leave" } });
    try {
      await s.client.listTools();
      const gatewayPid = (s.client.transport as { pid?: number | null }).pid ?? 0;
      expect(gatewayPid).toBeGreaterThan(0);
      // The gateway runs `env LEDGER=... node ledger-server.mjs`: env execs node in place, so the child is the server.
      const upstream = childrenOf(gatewayPid);
      expect(upstream.length).toBeGreaterThan(0);
      const environ = upstream.flatMap(environOf);
      expect(environ.filter((v) => v.startsWith("SAGABOARD_"))).toEqual([]);
      expect(environ.join("\n")).not.toContain(token.secret);
      expect(environ.join("\n")).not.toContain("sgb_worker-secret-never-to-leave");
      expect(environ).toContain("LEDGER_NOTE=passed on purpose");
      recordMatrixLine(`fault-matrix: mcp:token-stays-in-gateway store=${process.env.SAGABOARD_TEST_PG === "1" ? "postgresql" : "sqlite"} trials=1 upstream_processes=${upstream.length} token_in_upstream_env=0`);
    } finally {
      await s.close();
    }
    // Passing Sagaboard's own variables on is refused at start, saying why.
    await expect(kit.connect(token.secret, ledgerServer(file), { extra: ["--pass-env", "SAGABOARD_TOKEN"] })).rejects.toThrow(/never reach the real server/);
  }, 120_000);

  it("sessions are isolated: another client naming the first's run in _meta is refused and nothing is sent; the same client's second session may go on in it", async () => {
    const { prisma, ns, token, file } = await kit.team("mxcross");
    (await kit.connect(token.secret, undoableLedger(file), { extra: LOOKUP })).close();
    await reviewAppendEntry(prisma, ns);
    const first = await kit.connectHttp(token.secret, undoableLedger(file), { extra: LOOKUP });
    try {
      const ran = (await first.client.callTool({ name: "append_entry", arguments: { text: "mine" } })) as Result;
      expect(ran.isError ?? false, textOf(ran)).toBe(false);
      const runId = (await prisma.step.findFirstOrThrow({ where: { tool: `${ns}.append_entry` } })).runId;
      const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
      const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
      const as = async (secret: string) => {
        const client = new Client({ name: "second", version: "1" });
        await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${first.port}/mcp`), { requestInit: { headers: { authorization: `Bearer ${secret}` } } }));
        return client;
      };
      const intruder = await as(OTHER_CLIENT_SECRET);
      const crossed = (await intruder.callTool({ name: "append_entry", arguments: { text: "mine" }, _meta: { "dev.sagaboard/runId": runId } })) as Result;
      expect(crossed.isError).toBe(true);
      expect(crossed._meta?.["dev.sagaboard/error"]).toBe("RUN_NOT_YOURS");
      expect(textOf(crossed)).toMatch(/was not started by this client/);
      await intruder.close();
      expect(entries(file).filter((l) => l.text === "mine")).toHaveLength(1);
      // The same client, another session: it may go on in its own run, and the re-sent call is answered from the log.
      const again = await as(CLIENT_SECRET);
      const replayed = (await again.callTool({ name: "append_entry", arguments: { text: "mine" }, _meta: { "dev.sagaboard/runId": runId } })) as Result;
      expect(replayed.structuredContent).toEqual(ran.structuredContent);
      await again.close();
      expect(entries(file).filter((l) => l.text === "mine")).toHaveLength(1);
      recordMatrixLine(`fault-matrix: mcp:sessions-cross store=${process.env.SAGABOARD_TEST_PG === "1" ? "postgresql" : "sqlite"} trials=1 foreign_join_refused=1/1 effects=${entries(file).length}`);
    } finally {
      await first.close();
    }
  }, 120_000);

  it("a live list_changed: the server turns a tool reviewed PURE destructive while the client is connected; the gateway re-declares it, tells the client, and the next call is held, sending nothing", async () => {
    const { prisma, ns, token, file } = await kit.team("mxlive");
    const live = ["env", "LEDGER_LIVE=1", ...ledgerServer(file)];
    (await kit.connect(token.secret, live)).close();
    const count = await prisma.toolPolicy.findUniqueOrThrow({ where: { name: `${ns}.count_entries` } });
    await editTool(prisma, { name: count.name, expectedVersion: count.policyVersion, changes: { status: "REVIEWED", toolClass: "PURE", owner: null, correctionSubject: null, correctionBody: null }, reason: "reads only" }, ADMIN);
    const s = await kit.connect(token.secret, live, { extra: ["--table-cache-ms", "60000", "--relist-ms", "0"] });
    try {
      const { ToolListChangedNotificationSchema } = await import("@modelcontextprotocol/sdk/types.js");
      let told = 0;
      s.client.setNotificationHandler(ToolListChangedNotificationSchema, () => void told++);
      expect(((await s.client.callTool({ name: "count_entries", arguments: {} })) as Result).isError ?? false).toBe(false); // PURE: passed through
      const readsBefore = readFileSync(`${file}.reads`, "utf8").split("\n").filter(Boolean).length;
      writeFileSync(`${file}.variant`, "changed"); // the server updates count_entries: it now deletes the oldest entry
      for (let i = 0; i < 50 && told === 0; i++) await sleep(100);
      expect(told).toBeGreaterThan(0);
      for (let i = 0; i < 50 && (await prisma.toolPolicy.findUniqueOrThrow({ where: { name: count.name } })).status !== "UNREVIEWED"; i++) await sleep(100);
      expect(await prisma.toolPolicy.findUniqueOrThrow({ where: { name: count.name } })).toMatchObject({ status: "UNREVIEWED", toolClass: "PURE" });
      // The gateway trusts its 60 s copy of the table, but checks each call's definition against the reviewed one.
      const held = (await s.client.callTool({ name: "count_entries", arguments: {} })) as Result;
      expect(held._meta?.["dev.sagaboard/held"], textOf(held)).toBe(true);
      expect(readFileSync(`${file}.reads`, "utf8").split("\n").filter(Boolean).length).toBe(readsBefore);
      const listed = await s.client.listTools();
      expect(listed.tools.find((t) => t.name === "count_entries")?._meta).toMatchObject({ "dev.sagaboard/status": "UNREVIEWED", "dev.sagaboard/class": "IRREVERSIBLE" });
      recordMatrixLine(`fault-matrix: mcp:tools-list-changed-live store=${process.env.SAGABOARD_TEST_PG === "1" ? "postgresql" : "sqlite"} trials=1 client_told=${told} unreviewed_calls_sent=0`);
    } finally {
      await s.close();
    }
  }, 120_000);

  it("kill -9 of the gateway and a restart without --session (the README's setup): the client's run is found again, each call settled by key, one upstream call a write, no orphaned run", async () => {
    await killAndRestart("kill-9-restart-no-session", "stdio", CRASH_POINTS, false);
  }, 240_000);

  it("the client gives up on a 90 s operation after 60 s (scaled down): the server's call is kept open, its late result settles the step CONFIRMED; with no lookup and no answer coming, a person is asked on the cancel (measured: under a second on an idle machine); a read is never run twice", async () => {
    const { prisma, ns, token, file } = await kit.team("mxlate90");
    (await kit.connect(token.secret, undoableLedger(file), { extra: LOOKUP })).close();
    await reviewAppendEntry(prisma, ns);
    const count = await prisma.toolPolicy.findUniqueOrThrow({ where: { name: `${ns}.count_entries` } });
    await editTool(prisma, { name: count.name, expectedVersion: count.policyVersion, changes: { status: "REVIEWED", toolClass: "PURE", owner: null, correctionSubject: null, correctionBody: null }, reason: "reads only" }, ADMIN);
    const s = await kit.connect(token.secret, undoableLedger(file), { extra: [...LOOKUP, "--call-timeout-ms", "20000"] });
    const trials: Trial[] = [];
    try {
      // With a lookup: 600 ms of patience on a 900 ms operation.
      const args = { text: "ninety seconds", delayMs: 900 };
      const gaveUp = await s.client.callTool({ name: "append_entry", arguments: args }, undefined, { timeout: 600 }).then(() => false, () => true);
      expect(gaveUp).toBe(true);
      // The late result arrives while nobody asks (the operation ends 300 ms after the client gave up).
      // Waited for up to 60 s: a loaded machine is slow, and only the outcome is asserted, not its speed.
      for (let i = 0; i < 600 && (await prisma.step.findFirstOrThrow({ where: { tool: `${ns}.append_entry` } })).status !== "CONFIRMED"; i++) await sleep(100);
      const step = await prisma.step.findFirstOrThrow({ where: { tool: `${ns}.append_entry` } });
      const events = await prisma.auditEvent.findMany({ where: { stepId: step.id }, orderBy: { seq: "asc" }, select: { type: true, data: true } });
      expect(step.status, JSON.stringify(events)).toBe("CONFIRMED");
      expect(JSON.stringify(step.result)).toContain("ninety seconds");
      const answer = (await s.client.callTool({ name: "append_entry", arguments: args })) as Result;
      expect(answer.structuredContent?.text).toBe("ninety seconds");
      trials.push({ text: args.text, answered: true, gaveUp });
      // A read reviewed PURE, given up on and sent again: one real run between the two.
      const reads = () => (existsSync(`${file}.reads`) ? readFileSync(`${file}.reads`, "utf8").split("\n").filter(Boolean).length : 0);
      const before = reads();
      await s.client.callTool({ name: "count_entries", arguments: { delayMs: 900 } }, undefined, { timeout: 300 }).catch(() => undefined);
      const read = (await s.client.callTool({ name: "count_entries", arguments: { delayMs: 900 } })) as Result;
      expect(read.isError ?? false, textOf(read)).toBe(false);
      expect(reads() - before).toBe(1);
      recordMatrixLine(`fault-matrix: mcp:client-timeout-90s-late-result store=${process.env.SAGABOARD_TEST_PG === "1" ? "postgresql" : "sqlite"} trials=1 late_result_confirmed=1/1 reads_run_twice=0`);
    } finally {
      await s.close();
    }
    expect(await tally("client-timeout-90s", ns, file, trials)).toMatchObject({ duplicates: 0, lost: 0, unknownAtRest: 0, unapproved: 0, escalated: 0 });
    // No lookup, and the server never answers: the client's cancel records UNKNOWN and a person is asked at once.
    const noLookup = await kit.connect(token.secret, undoableLedger(file), { extra: ["--call-timeout-ms", "120000"] });
    try {
      const args = { text: "never answered", delayMs: 600_000 };
      const cancelledAt = Date.now();
      await noLookup.client.callTool({ name: "append_entry", arguments: args }, undefined, { timeout: 300 }).catch(() => undefined);
      let escalation = null;
      for (let i = 0; i < 600 && !escalation; i++) {
        escalation = await prisma.escalation.findFirst({ where: { kind: "OUTCOME_UNKNOWN", step: { tool: `${ns}.append_entry`, args: { equals: args } } } });
        if (!escalation) await sleep(100);
      }
      expect(escalation).not.toBeNull();
      // Raised on the cancel, not when the gateway's 120 s call timeout runs out: how soon is measured (the
      // matrix line), not asserted, so a busy machine cannot fail it.
      const seconds = (escalation!.createdAt.getTime() - cancelledAt) / 1000;
      expect(seconds).toBeLessThan(60);
      const resent = (await noLookup.client.callTool({ name: "append_entry", arguments: args })) as Result;
      expect(resent.isError).toBe(true);
      expect(textOf(resent)).toMatch(/a person decides|still running/);
      recordMatrixLine(`fault-matrix: mcp:client-timeout-90s-no-lookup store=${process.env.SAGABOARD_TEST_PG === "1" ? "postgresql" : "sqlite"} trials=1 escalated_after_s=${seconds.toFixed(1)} answer_to_resend="a person decides"`);
    } finally {
      await noLookup.close();
    }
  }, 180_000);
});
