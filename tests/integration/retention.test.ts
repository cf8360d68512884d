/**
 * Retention and archives on a real database (SQLite, or PostgreSQL with SAGABOARD_TEST_PG=1),
 * lib/server/retention/ARCHITECTURE.md:
 * - a dry run says what it would archive and changes nothing (no row, no file);
 * - a pass archives only settled runs past their retention (a tool's own retention wins over the
 *   default), verifies the file, removes exactly those runs, and leaves the others as they were;
 * - every audit chain still verifies afterwards, a heads file saved before still matches, and a link
 *   appended later to an archived chain continues from its archived head;
 * - the archive verifies offline, and every single-byte edit of it is caught at the line it is on;
 * - a run that gets open work while the file is written stays (the removal looks again);
 * - bad input (a retention under a day, a file that is no archive) gets a clear error.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { appendAuditLink } from "@/lib/core/db/audit-chain";
import { writeTransaction } from "@/lib/core/db/transactions";
import { verifyArchiveBytes, verifyArchiveFile } from "@/lib/core/archive/archive-file";
import { verifyAuditChains } from "@/lib/desks/audit/verify-audit-chains";
import { exportChainHeads } from "@/lib/desks/audit/export-chain-heads";
import { checkChainHeads } from "@/lib/desks/audit/check-chain-heads";
import { archiveSettledRuns } from "@/lib/server/retention/archive-settled-runs";
import { startRetentionDuty } from "@/lib/server/retention/retention-duty";
import { setDefaultRetention } from "@/lib/server/retention/retention-policy";
import { editTool } from "@/lib/server/tools/edit-tool";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { seedSupportToolTable } from "@/lib/demo/seed/support-tool-table";
import { getHostedWorld, resetHostedWorld } from "@/lib/demo/sim/host";
import { stepKey } from "@/packages/client/src/saga/keys";
import { useTestDatabase } from "../api/api-test-kit";

// A hook into the pass between writing the file and removing the rows: the file is verified there.
const hooks = vi.hoisted(() => ({ beforeVerify: null as null | (() => Promise<void>) }));
vi.mock("@/lib/core/archive/archive-file", async (importOriginal) => {
  const actual = await importOriginal<typeof import("@/lib/core/archive/archive-file")>();
  return {
    ...actual,
    verifyArchiveFile: async (...args: Parameters<typeof actual.verifyArchiveFile>) => {
      await hooks.beforeVerify?.();
      return actual.verifyArchiveFile(...args);
    },
  };
});

const getPrisma = useTestDatabase("retention");
const archiveDir = mkdtempSync(path.join(tmpdir(), "sagaboard-archives-"));
afterAll(() => rmSync(archiveDir, { recursive: true, force: true }));
process.env.SAGABOARD_ARCHIVE_DIR = archiveDir;
process.env.SAGABOARD_ARCHIVE_KEY_FILE = "";
const admin = { type: "user" as const, id: "admin@example.com" };
const person = { id: "usr_auditor", email: "auditor@example.com", name: "Auditor", role: "admin" as const };
const system = { type: "system" as const, id: "test" };
const DAY = 86_400_000;
let seq = 0;

/** A run with one confirmed step of `tool`, in `status`, last changed `ageDays` ago. */
async function makeRun(tool: string, status: "COMPLETED" | "RUNNING", ageDays: number): Promise<string> {
  const prisma = await getPrisma();
  const store = new PrismaSagaStore(prisma);
  const id = `run_ret${Date.now().toString(36)}${++seq}`;
  await store.createRun({ id, title: `retention ${seq}`, agent: "support-agent", onBehalfOf: null, metadata: {} }, { type: "run.started", actor: system });
  const { step } = await store.insertIntent(
    {
      id: `stp_ret${Date.now().toString(36)}${seq}`, runId: id, stepIdx: 0, tool, toolClass: "REVERSIBLE", stepKey: stepKey(id, 0, tool),
      args: { to: `zed${seq}@example.com`, subject: "Hi", body: `Dear Zed Number${seq}` }, argsHash: "h", phase: "STAGING", policyVersion: 1, approvalId: null, planItemIdx: null,
      compensation: { tool: "delete_email_draft", args: {} }, compensationKey: null, correction: null, audience: ["internal"],
    },
    { type: "step.intended", actor: system },
  );
  await store.updateStep(step.id, { status: ["INTENDED"] }, { status: "CONFIRMED", externalRef: `drf_${seq}` }, { type: "step.confirmed", actor: system });
  if (status === "COMPLETED") await store.setRunStatus(id, null, "COMPLETED", { type: "run.completed", actor: system });
  // A correction the desk sent, kept in clear in the hot table (its words name the person).
  await store.createCorrection({ id: `cor_ret${Date.now().toString(36)}${seq}`, runId: id, stepId: step.id, audience: ["customer"], rank: 2, subject: `About zed${seq}@example.com`, body: `We wrote to Zed Number${seq} by mistake.`, draftedBy: null }, { type: "correction.drafted", actor: system });
  await prisma.correction.updateMany({ where: { runId: id }, data: { status: "SENT" } });
  const at = new Date(Date.now() - ageDays * DAY);
  await prisma.run.update({ where: { id }, data: { updatedAt: at } });
  await prisma.step.updateMany({ where: { runId: id }, data: { updatedAt: at } });
  return id;
}

async function snapshot(runId: string): Promise<string> {
  const prisma = await getPrisma();
  return JSON.stringify([
    await prisma.run.findUnique({ where: { id: runId } }),
    await prisma.step.findMany({ where: { runId }, orderBy: { stepIdx: "asc" } }),
    await prisma.auditEvent.findMany({ where: { scope: `run:${runId}` }, orderBy: { seq: "asc" } }),
  ]);
}

async function counts() {
  const prisma = await getPrisma();
  return [await prisma.run.count(), await prisma.step.count(), await prisma.auditEvent.count(), await prisma.archive.count(), await prisma.archivedChain.count()];
}

let old = "";
let running = "";
let recent = "";
let longKept = "";
let archiveFile = "";

beforeAll(async () => {
  const prisma = await getPrisma();
  resetHostedWorld({ searchLagMs: 0 });
  await seedSupportToolTable(prisma, createSupportToolRegistry(getHostedWorld()));
  await setDefaultRetention(prisma, { seconds: 30 * 86_400, actor: admin });
  const draft = await prisma.toolPolicy.findUniqueOrThrow({ where: { name: "create_email_draft" } });
  await editTool(prisma, { name: draft.name, expectedVersion: draft.policyVersion, changes: { personalData: { subject: "to", args: ["body"], result: [] } } }, admin);
  const send = await prisma.toolPolicy.findUniqueOrThrow({ where: { name: "send_email" } });
  const edited = await editTool(prisma, { name: "send_email", expectedVersion: send.policyVersion, changes: { retentionSec: 90 * 86_400 }, reason: "letters are kept a quarter" }, admin);
  expect(edited.ok).toBe(true);
  old = await makeRun("create_email_draft", "COMPLETED", 60);
  running = await makeRun("create_email_draft", "RUNNING", 60);
  recent = await makeRun("create_email_draft", "COMPLETED", 1);
  longKept = await makeRun("send_email", "COMPLETED", 60);
});

describe("retention", () => {
  it("a tool's retention is a versioned field of its row; under a day is refused saying so", async () => {
    const prisma = await getPrisma();
    const row = await prisma.toolPolicy.findUniqueOrThrow({ where: { name: "send_email" } });
    expect(row.retentionSec).toBe(90 * 86_400);
    const version = await prisma.toolPolicyVersion.findUniqueOrThrow({ where: { toolName_version: { toolName: "send_email", version: row.policyVersion } } });
    expect(version.diff).toEqual({ retentionSec: { from: null, to: 90 * 86_400 } });
    await expect(editTool(prisma, { name: "send_email", expectedVersion: row.policyVersion, changes: { retentionSec: 3600 } }, admin)).rejects.toThrow(/At least a day/);
    await expect(setDefaultRetention(prisma, { seconds: 60, actor: admin })).rejects.toThrow(/default retention/i);
  });

  it("a dry run says what it would archive and changes nothing", async () => {
    const before = await counts();
    const snap = await snapshot(old);
    const result = await archiveSettledRuns(await getPrisma(), { dryRun: true }, admin);
    expect(result.due).toBe(1);
    expect(result.archive).toBeNull();
    expect(result.message).toMatch(/Would archive 1 run/);
    expect(result.message).toMatch(/Dry run: nothing was changed/);
    expect(result.kept.openSteps + result.kept.openWork + result.kept.retention).toBeGreaterThanOrEqual(1); // the send_email run
    expect(await counts()).toEqual(before);
    expect(await snapshot(old)).toBe(snap);
    expect(readdirSync(archiveDir)).toEqual([]);
  });

  it("archives the settled run past its retention, verifies the file, removes it, and leaves the others as they were", async () => {
    const prisma = await getPrisma();
    const heads = await exportChainHeads({ actor: person });
    const kept = await Promise.all([running, recent, longKept].map(snapshot));
    const result = await archiveSettledRuns(prisma, {}, admin);
    expect(result.archive?.runs).toBe(1);
    expect(result.removed).toBe(1);
    archiveFile = result.archive!.file;
    expect(await prisma.run.findUnique({ where: { id: old } })).toBeNull();
    expect(await prisma.step.count({ where: { runId: old } })).toBe(0);
    expect(await prisma.auditEvent.count({ where: { scope: `run:${old}` } })).toBe(0);
    expect(await Promise.all([running, recent, longKept].map(snapshot))).toEqual(kept);
    expect(await prisma.archivedChain.findUnique({ where: { scope: `run:${old}` } })).toMatchObject({ archiveId: result.archive!.id });
    expect(await prisma.auditEvent.findFirst({ where: { scope: "archive", type: "runs.archived" } })).not.toBeNull();

    // No personal value in clear in the file: the step's fields are stored sealed, and the desk's
    // clear copy of the correction is sealed under the same key on its way into the archive.
    const text = readFileSync(archiveFile, "utf8");
    expect((await prisma.correction.findFirstOrThrow({ where: { runId: recent } })).body).toMatch(/Zed Number/); // what the check looks for, in clear in the hot table
    expect(text).toContain('"type":"correction"');
    for (const clear of [/zed\d+@example\.com/, /Zed Number/]) expect(clear.test(text), String(clear)).toBe(false);
    const offline = await verifyArchiveFile(archiveFile);
    expect(offline).toMatchObject({ ok: true, runs: 1, steps: 1 });
    const whole = await verifyAuditChains({ actor: person });
    expect(whole.verified).toBe(true);
    expect(whole.archivedChains).toBeGreaterThanOrEqual(1);
    const saved = await checkChainHeads({ actor: person, file: heads });
    expect(saved.matches).toBe(true);
    expect(saved.archived).toBe(1);

    // A second pass has nothing to do.
    expect((await archiveSettledRuns(prisma, {}, admin)).archive).toBeNull();
  });

  it("a link appended later to an archived chain continues from the archived head, and the log still verifies", async () => {
    const prisma = await getPrisma();
    const head = await prisma.archivedChain.findUniqueOrThrow({ where: { scope: `run:${old}` } });
    const link = await writeTransaction(prisma, (tx, now) => appendAuditLink(tx, now, { scope: `run:${old}`, runId: old, stepId: null, type: "note.late", actor: system, data: {} }));
    expect(link.seq).toBe(head.seq + 1);
    expect((await verifyAuditChains({ actor: person })).verified).toBe(true);
    expect((await verifyAuditChains({ actor: person, scope: `run:${old}` })).verified).toBe(true);
  });

  it("archive:verify catches every single-byte edit, naming the line it is on", async () => {
    const bytes = readFileSync(archiveFile);
    expect((await verifyArchiveBytes(bytes)).ok).toBe(true);
    const lineOf: number[] = [];
    let line = 1;
    for (const b of bytes) {
      lineOf.push(line);
      if (b === 0x0a) line++;
    }
    let missed = 0;
    let misplaced = 0;
    for (let i = 0; i < bytes.length; i++) {
      const edited = Buffer.from(bytes);
      edited[i] = bytes[i]! === 0x30 ? 0x31 : bytes[i]! ^ 0x01; // another byte, still ASCII
      const result = await verifyArchiveBytes(edited);
      if (result.ok) missed++;
      else if (result.line !== lineOf[i]) misplaced++;
    }
    expect(missed).toBe(0);
    expect(misplaced).toBe(0);
    // Cut short, or not an archive at all: said in words.
    const cut = bytes.subarray(0, bytes.lastIndexOf(0x0a, bytes.length - 2) + 1);
    const short = await verifyArchiveBytes(cut);
    expect(short.ok).toBe(false);
    if (!short.ok) expect(short.message).toMatch(/without its checkpoint: it was cut short/);
    const other = path.join(archiveDir, "not-an-archive.jsonl");
    writeFileSync(other, '{"hello":"world"}\n');
    const notOne = await verifyArchiveFile(other);
    expect(notOne.ok).toBe(false);
    if (!notOne.ok) expect(notOne.message).toMatch(/line 1/);
    expect(existsSync(archiveFile)).toBe(true);
  });

  it("a run that gets open work after it was written to the file stays in the hot tables", async () => {
    const prisma = await getPrisma();
    const late = await makeRun("create_email_draft", "COMPLETED", 60);
    // A revoke's task lands between the first reading and the removal (no new link in the run's chain).
    hooks.beforeVerify = async () => {
      await prisma.workerTask.create({ data: { id: `tsk_late${seq}`, kind: "COMPENSATE", runId: late, tools: ["create_email_draft"], status: "PENDING", dedupeKey: `late:${late}`, payload: {} } });
    };
    try {
      const result = await archiveSettledRuns(prisma, {}, admin);
      expect(result.archive?.runs).toBe(1);
      expect(result.removed).toBe(0);
      expect(result.message).toMatch(/1 changed while the file was written and stay/);
    } finally {
      hooks.beforeVerify = null;
    }
    expect(await prisma.run.findUnique({ where: { id: late } })).not.toBeNull();
    expect(await prisma.archivedChain.findUnique({ where: { scope: `run:${late}` } })).toBeNull();
    expect((await verifyAuditChains({ actor: person })).verified).toBe(true);
  });

  it("runs as a duty of the app process", async () => {
    const duty = startRetentionDuty({ prisma: getPrisma, everyMs: 3600_000, firstAfterMs: 3600_000, log: () => {} });
    try {
      const result = await duty.runNow();
      expect(result.dryRun).toBe(false);
      expect(result.archive).toBeNull(); // nothing is due any more
    } finally {
      duty.stop();
    }
  });
});
