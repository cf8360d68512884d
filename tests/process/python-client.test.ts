/**
 * The Python package (clients/python, standard library only) as a team installs it: `pip install`ed
 * offline into a fresh virtual environment, every Python process run from a directory outside the
 * checkout, so `sagaboard` is the installed copy. Against a real server it declares its four tools, an
 * admin accepts them, and its pytest suite runs the trip-booking scenarios with faults (timeout after
 * success with a reworded retry, a crash after the effect, an irreversible email held until a reviewer
 * approves, a plan committed by a fresh process, an unwind). Effects are counted in the fake systems'
 * ledgers the Python agent defines; this side counts them again from the same file, and checks the
 * saga log agrees.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sharedSagaStore } from "@/lib/core/db/prisma-saga-store";
import { SagaErrorCode } from "@/packages/client/src/saga/errors";
import { ToolRegistry } from "@/packages/client/src/saga/tools";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { World } from "@/lib/demo/sim";
import { editTool } from "@/lib/server/tools/edit-tool";
import { makeToken, useTestDatabase } from "../api/api-test-kit";
import { startTestServer, type TestServer } from "../support/http-server";
import { ReviewerEngine } from "@/packages/client/src/saga/reviewer-engine";

const getPrisma = useTestDatabase("python-client");
const PACKAGE_DIR = path.join(process.cwd(), "clients", "python");
const TRIP_AGENT = path.join(PACKAGE_DIR, "tests", "trip_agent.py");
const LEDGER = path.join(process.cwd(), "test-results", `python-ledger-${process.pid}-${process.env.SAGABOARD_TEST_PG ? "pg" : "sqlite"}.json`);
// Outside the checkout: nothing on the path but the venv (and, for pytest, the system's site-packages).
const OUTSIDE = mkdtempSync(path.join(os.tmpdir(), "sagaboard-python-"));
const VENV = path.join(OUTSIDE, "venv");
const VENV_PYTHON = path.join(VENV, "bin", "python");
let server: TestServer;
let installed: { code: number | null; out: string };

beforeAll(async () => {
  mkdirSync(path.dirname(LEDGER), { recursive: true }); // a fresh clone has no test-results/ yet
  rmSync(LEDGER, { force: true });
  [server, installed] = await Promise.all([startTestServer(), installPackage()]);
}, 60_000);
afterAll(async () => {
  await server?.close();
  rmSync(LEDGER, { force: true });
  rmSync(OUTSIDE, { recursive: true, force: true });
});

/**
 * A fresh venv with the package installed as a team would: offline, from the package directory.
 * `--system-site-packages` because pytest is installed system-wide, not in the venv (the venv's own
 * site-packages still come first, and sagaboard is in no other); `--without-pip` saves ensurepip's
 * seconds, since the system's pip run by the venv's python installs into the venv. `--no-index`: no
 * registry is asked; the package's build backend needs nothing but the standard library.
 */
async function installPackage(): Promise<{ code: number | null; out: string }> {
  const venv = await run("python3", ["-m", "venv", "--system-site-packages", "--without-pip", VENV], {});
  if (venv.code !== 0) return venv;
  return run(VENV_PYTHON, ["-m", "pip", "install", "--no-build-isolation", "--no-index", "--no-cache-dir", "--quiet", PACKAGE_DIR], {});
}

function python(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return run(VENV_PYTHON, args, env);
}

function run(command: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: OUTSIDE, env: { ...process.env, ...env, PYTHONDONTWRITEBYTECODE: "1" }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    child.on("error", reject);
    child.on("exit", (code) => resolve({ code, out }));
  });
}

describe("the Python package", () => {
  it("installs offline into a fresh venv, and the installed copy is the one imported outside the checkout", async () => {
    expect(installed.code, installed.out).toBe(0);
    // Type checkers read the installed copy's hints only when py.typed is installed beside it.
    const where = await python(["-c", "import os, sagaboard; print(sagaboard.__file__, os.path.isfile(os.path.join(os.path.dirname(sagaboard.__file__), 'py.typed')))"], {});
    expect(where.code, where.out).toBe(0);
    const [file, typed] = where.out.trim().split(" ");
    expect(file!.startsWith(path.join(VENV, "lib"))).toBe(true);
    expect(typed).toBe("True");
  });

  it("raises SagaError for exactly the saga engine's codes (a copy of packages/client/src/saga/errors.ts's list that must not drift)", async () => {
    expect(installed.code, installed.out).toBe(0);
    const codes = await python(["-c", "import json, sagaboard; print(json.dumps(sorted(sagaboard.SAGA_ERROR_CODES)))"], {});
    expect(codes.code, codes.out).toBe(0);
    expect(JSON.parse(codes.out)).toEqual(Object.keys(SagaErrorCode).sort());
  });

  it("declares its tools, and a trip-booking agent with faults makes each effect once", { timeout: 120_000 }, async () => {
    expect(installed.code, installed.out).toBe(0);
    const prisma = await getPrisma();
    // The team's bootstrap: a token for its namespace before its tools exist; declaring adds them.
    const token = await makeToken([], "trip");
    const env = { SAGABOARD_URL: server.url, SAGABOARD_TOKEN: token.secret, SAGABOARD_LEDGER: LEDGER, SAGABOARD_RECHECK: "0.2", SAGABOARD_NAMESPACE: "trip" };

    const declared = await python([TRIP_AGENT, "declare"], env);
    expect(declared.code, declared.out).toBe(0);
    const result = JSON.parse(declared.out) as { namespace: string; tools: { name: string; status: string }[] };
    expect(result.namespace).toBe("trip");
    expect(result.tools.map((t) => `${t.name}:${t.status}`).sort()).toEqual(["trip.book_hotel:UNREVIEWED", "trip.hold_car:UNREVIEWED", "trip.hold_seat:UNREVIEWED", "trip.send_itinerary:UNREVIEWED"]);
    const admin = { type: "user" as const, id: "admin@example.com" };
    for (const { name } of result.tools) {
      const row = await prisma.toolPolicy.findUniqueOrThrow({ where: { name } });
      await editTool(prisma, { name, expectedVersion: row.policyVersion, changes: { status: "REVIEWED" }, reason: "checked against the team's connector" }, admin);
    }

    const { createAgentToken } = await import("@/lib/server/tokens/create-agent-token");
    // The worker also holds the email provider the correction desk sends through (send_email).
    const worker = await createAgentToken(prisma, { name: "trip-worker", tools: [...result.tools.map((t) => t.name), "send_email"], role: "worker", createdBy: "admin@example.com" });
    Object.assign(env, { SAGABOARD_WORKER_TOKEN: worker.secret });

    // The reviewer: approves each pivot the agent hands over for review (after it has seen the pivot
    // pending), once, while the Python suite runs.
    const engine = new ReviewerEngine({ store: sharedSagaStore(prisma), registry: new ToolRegistry([], []) });
    let stop = false;
    const approved: string[] = [];
    const reviewer = (async () => {
      while (!stop) {
        const handedOver = (() => {
          try {
            return (JSON.parse(readFileSync(LEDGER, "utf8")) as { review?: string[] }).review ?? [];
          } catch {
            return []; // no ledger yet, or caught mid-write: look again next round
          }
        })();
        for (const pivot of await prisma.pivot.findMany({ where: { status: "PENDING", id: { in: handedOver } } })) {
          await engine.decidePivot(pivot.id, { approve: true, actor: { type: "user", id: "reviewer@example.com" }, planHash: pivot.planHash });
          approved.push(pivot.id);
        }
        await new Promise((r) => setTimeout(r, 500));
      }
    })();
    // No cache directory in the checkout; -rs says why anything was skipped (nothing should be); the
    // system's other pytest plugins are not the package's and cost a second to load.
    const suite = await python(["-m", "pytest", "-p", "no:cacheprovider", "-rs", path.join(PACKAGE_DIR, "tests")], { ...env, PYTEST_DISABLE_PLUGIN_AUTOLOAD: "1" });
    stop = true;
    await reviewer;
    expect(suite.code, suite.code === 5 ? `pytest collected no tests:\n${suite.out}` : suite.out).toBe(0);
    expect(suite.out).toContain(`sagaboard client: ${VENV}`); // the installed copy, not the checkout's src/
    expect(suite.out).toMatch(/ 17 passed in /); // 6 trip scenarios against the server, 11 without it; none skipped
    const glue = /sagaboard glue: (\d+) lines for four tools \((\d+) with blank lines\)/.exec(suite.out);
    expect(glue, suite.out).not.toBeNull();
    console.log(`Python glue: ${glue![1]} lines for four tools (${glue![2]} with blank lines)`);
    expect(Number(glue![2])).toBeLessThanOrEqual(40);
    expect(approved).toHaveLength(2); // the Faro email, and the Braga plan a fresh process committed

    // The same ledger, counted here: one booking, one seat, one car per trip, one email.
    const { released = [], review: _review, ...ledger } = JSON.parse(readFileSync(LEDGER, "utf8")) as Record<string, Record<string, { id?: string; city?: string; flight?: string }>> & { released?: { key: string }[]; review?: string[] };
    expect(released).toHaveLength(3); // the unwound trip: hotel, seat and car, each released once
    expect(Object.keys(ledger.hotel ?? {})).toHaveLength(3);
    expect(Object.keys(ledger.flight ?? {})).toHaveLength(3);
    expect(Object.values(ledger.car ?? {}).map((c) => c.city).sort()).toEqual(["Braga", "Faro", "Funchal", "Porto"]);
    expect(Object.keys(ledger.email ?? {})).toHaveLength(2);
    // And the log agrees: every key in a ledger is a step with that key, CONFIRMED, or COMPENSATED
    // exactly when a release of it is in the ledger.
    const steps = await prisma.step.findMany({ where: { tool: { startsWith: "trip." } } });
    const releasedKeys = new Set(released.map((r) => r.key));
    for (const system of Object.values(ledger)) {
      for (const key of Object.keys(system)) {
        const step = steps.find((s) => s.stepKey === key);
        expect(step?.status).toBe(step?.compensationKey && releasedKeys.has(step.compensationKey) ? "COMPENSATED" : "CONFIRMED");
      }
    }
    const email = steps.find((s) => s.tool === "trip.send_itinerary");
    expect(email).toMatchObject({ phase: "COMMIT", toolClass: "IRREVERSIBLE" });

    // "Check the real system" for a tool only the Python worker holds: a LOOKUP task it answers.
    const { enqueueTask } = await import("@/lib/server/worker/enqueue-task");
    const { ZLookupResult } = await import("@/packages/client/src/protocol/tasks/lookup-task");
    const { task } = await enqueueTask(prisma, { kind: "LOOKUP", runId: email!.runId, stepId: email!.id, tools: [email!.tool], payload: { escalationId: "esc_grid", askedBy: "user:rita@example.com" }, dedupeKey: `lookup:${email!.id}:1` });
    const worked = await python([TRIP_AGENT, "worker", "python-lookup-worker"], env);
    expect(worked.code, worked.out).toBe(0);
    const done = await prisma.workerTask.findUniqueOrThrow({ where: { id: task.id } });
    expect([done.status, done.claimedBy]).toEqual(["DONE", "python-lookup-worker"]);
    const answer = ZLookupResult.parse(done.result);
    expect(answer).toMatchObject({ stepId: email!.id, lookup: { found: true, externalRef: ledger.email![email!.stepKey]!.id } });
    expect(Object.keys(JSON.parse(readFileSync(LEDGER, "utf8")).email)).toHaveLength(2); // looked up, not sent again

    // A person pulls back the car held for the Faro trip (a revoke): the COMPENSATE task goes to the
    // Python worker, the only one holding trip.hold_car; the car is released once, under its own key.
    const car = steps.find((s) => s.tool === "trip.hold_car" && (s.args as { city?: string }).city === "Faro")!;
    const pulled = await enqueueTask(prisma, { kind: "COMPENSATE", runId: car.runId, stepId: car.id, tools: [car.tool], payload: { reason: "the customer cancelled the car", draftedBy: "revoke:rvk_test" }, dedupeKey: `compensate:${car.id}` });
    const revoked = await python([TRIP_AGENT, "worker", "python-revoke-worker"], env);
    expect(revoked.code, revoked.out).toBe(0);
    expect((await prisma.workerTask.findUniqueOrThrow({ where: { id: pulled.task.id } })).status).toBe("DONE");
    expect(await prisma.step.findUniqueOrThrow({ where: { id: car.id } })).toMatchObject({ status: "COMPENSATED", compensationState: "CONFIRMED" });
    const releases = (JSON.parse(readFileSync(LEDGER, "utf8")) as { released: { target: string; key: string }[] }).released.filter((r) => r.target === car.stepKey);
    expect(releases).toEqual([{ system: "car", target: car.stepKey, key: car.compensationKey }]);
    expect(JSON.parse(revoked.out)).toEqual([expect.objectContaining({ stepId: car.id, status: "COMPENSATED" })]);

    // Support staff approved a correction to two people (what lib/desks/corrections/send-correction.ts
    // records: the send run, its pivot of send_email calls, approved, and the task). The
    // SEND_CORRECTION task goes to the Python worker, the one holding the email provider: each
    // approved message is sent once, under its step's key, and a repeated task sends nothing.
    const sendRun = "run_cor_python";
    const messages = ["ada@example.com", "bob@example.com"].map((to) => ({ to, subject: "Correction: your trip to Faro", body: "Please disregard our earlier email." }));
    const store = sharedSagaStore(prisma);
    const sam = { type: "user" as const, id: "sam@example.com" };
    await store.createRun({ id: sendRun, title: "Correction: your trip to Faro", agent: "correction-desk", onBehalfOf: sam.id, metadata: {} }, { type: "run.started", actor: sam, data: {} });
    const desk = new ReviewerEngine({ store, registry: createSupportToolRegistry(new World()) });
    const sendPivot = await (await desk.resume(sendRun)).requestPivot({ summary: "Send the correction to both customers", plan: messages.map((args) => ({ tool: "send_email", args })) });
    await desk.decidePivot(sendPivot.id, { approve: true, actor: sam, planHash: sendPivot.planHash });
    const sendTask = (payload: { correctionId: string; messages: typeof messages }, dedupeKey: string) => enqueueTask(prisma, { kind: "SEND_CORRECTION", runId: sendRun, tools: ["send_email"], payload, dedupeKey });
    const send = await sendTask({ correctionId: "cor_python", messages }, "send-correction:cor_python");
    const sentOut = await python([TRIP_AGENT, "worker", "python-mail-worker"], env);
    expect(sentOut.code, sentOut.out).toBe(0);
    expect((await prisma.workerTask.findUniqueOrThrow({ where: { id: send.task.id } })).status).toBe("DONE");
    const mailSteps = await prisma.step.findMany({ where: { runId: sendRun }, orderBy: { stepIdx: "asc" } });
    expect(mailSteps.map((s) => `${s.tool}:${s.phase}:${s.status}`)).toEqual(["send_email:COMMIT:CONFIRMED", "send_email:COMMIT:CONFIRMED"]);
    const mail = () => (JSON.parse(readFileSync(LEDGER, "utf8")) as { mail?: Record<string, { to: string }> }).mail ?? {};
    expect(Object.keys(mail()).sort()).toEqual(mailSteps.map((s) => s.stepKey).sort()); // one message per approved call, under its step's key
    expect(Object.values(mail()).map((m) => m.to).sort()).toEqual(["ada@example.com", "bob@example.com"]);
    expect((await store.getRun(sendRun))?.status).toBe("COMPLETED");
    await sendTask({ correctionId: "cor_python", messages }, "send-correction:cor_python:again");
    const repeated = await python([TRIP_AGENT, "worker", "python-mail-worker-2"], env);
    expect(repeated.code, repeated.out).toBe(0);
    expect(JSON.parse(repeated.out)).toEqual([{ correctionId: "cor_python", alreadySent: true }]);
    expect(Object.keys(mail())).toHaveLength(2);
  });
});
