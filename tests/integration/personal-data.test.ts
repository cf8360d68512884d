/**
 * Personal data on a real database (SQLite, or PostgreSQL with SAGABOARD_TEST_PG=1), each transition
 * of lib/core/privacy/ARCHITECTURE.md:
 * - the tool table declares which fields are personal: an admin's edit is a version; a team's
 *   declaration is a proposal, never applied to a reviewed row;
 * - a step's personal fields (and a template's copies of them) are stored sealed, read back in clear;
 * - erasure: refused for bad input, an unknown subject, open work (naming the run) and a second time;
 *   with `now` the open step becomes an escalation; afterwards the subject's email and name appear
 *   nowhere in the database's bytes (the SQLite files; pg_dump), the fields read "erased on <date>",
 *   every audit chain still verifies, and another subject is untouched; with `whenSettled` it is
 *   scheduled instead, and the app's sweep erases once the steps have settled.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it, beforeAll } from "vitest";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { databaseKind } from "@/lib/core/db/dialect";
import { sqliteFilePath } from "@/lib/core/db/url";
import { personalDataVault } from "@/lib/core/privacy/personal-data-vault";
import { verifyAuditChains } from "@/lib/desks/audit/verify-audit-chains";
import { eraseSubject } from "@/lib/server/privacy/erase-subject";
import { getRunTimeline } from "@/lib/desks/runs/get-run-timeline";
import { getPivotScreen } from "@/lib/desks/pivots/get-pivot-screen";
import { erasePersonalData } from "@/lib/desks/privacy/erase-personal-data";
import { findErasures } from "@/lib/desks/privacy/find-erasures";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import { stepKey } from "@/packages/client/src/saga/keys";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { seedSupportToolTable } from "@/lib/demo/seed/support-tool-table";
import { getHostedWorld, resetHostedWorld } from "@/lib/demo/sim/host";
import { declareTools } from "@/lib/server/tools/declare-tools";
import { editTool } from "@/lib/server/tools/edit-tool";
import { startStuckRunDuty } from "@/lib/server/worker/stuck-run-duty";
import { useTestDatabase } from "../api/api-test-kit";
import { directTestPostgresUrl } from "../support/test-database";

process.env.SAGABOARD_SIM_SEARCH_LAG_MS = "0";
const getPrisma = useTestDatabase("personal-data");
const admin = { type: "user" as const, id: "admin@example.com" };

beforeAll(async () => {
  resetHostedWorld({ searchLagMs: 0 });
  await seedSupportToolTable(await getPrisma(), createSupportToolRegistry(getHostedWorld()));
});

describe("the tool table declares personal data", () => {
  it("an admin's declaration is a new policy version with its diff in the history", async () => {
    const prisma = await getPrisma();
    const row = await prisma.toolPolicy.findUniqueOrThrow({ where: { name: "create_email_draft" } });
    const edited = await editTool(prisma, { name: row.name, expectedVersion: row.policyVersion, changes: { personalData: { subject: "to", args: ["body"], result: [] } }, reason: "customer emails" }, admin);
    expect(edited.ok).toBe(true);
    if (edited.ok) expect(edited.changed).toEqual(["personal data"]);
    const after = await prisma.toolPolicy.findUniqueOrThrow({ where: { name: row.name } });
    expect(after.policyVersion).toBe(row.policyVersion + 1);
    expect(after.personalData).toEqual({ subject: "to", args: ["body"], result: [] });
    const version = await prisma.toolPolicyVersion.findUniqueOrThrow({ where: { toolName_version: { toolName: row.name, version: after.policyVersion } } });
    expect(version.diff).toEqual({ personalData: { from: null, to: { subject: "to", args: ["body"], result: [] } } });
  });

  it("a malformed declaration is refused naming the field", async () => {
    const prisma = await getPrisma();
    const row = await prisma.toolPolicy.findUniqueOrThrow({ where: { name: "create_email_draft" } });
    await expect(editTool(prisma, { name: row.name, expectedVersion: row.policyVersion, changes: { personalData: { subject: "to; drop", args: [], result: [] } } }, admin)).rejects.toThrow(/dotted path/);
  });

  it("a team's declaration proposes personal fields; a reviewed row keeps its own until an admin accepts", async () => {
    const prisma = await getPrisma();
    const manifest = (personalData?: unknown) => ({ tools: [{ name: "open_case", class: "IRREVERSIBLE", lookup: true, owner: "acme-ops", correction: { subject: "About {{email}}", body: "Sorry." }, argsSchema: { type: "object" }, ...(personalData ? { personalData } : {}) }] });
    await declareTools(prisma, manifest(), { namespace: "acme", actor: { type: "system", id: "acme" } });
    const declared = await prisma.toolPolicy.findUniqueOrThrow({ where: { name: "acme.open_case" } });
    const reviewed = await editTool(prisma, { name: declared.name, expectedVersion: declared.policyVersion, changes: { status: "REVIEWED" } }, admin);
    expect(reviewed.ok).toBe(true);
    await declareTools(prisma, manifest({ subject: "email", args: ["name"], result: ["caseOwner"] }), { namespace: "acme", actor: { type: "system", id: "acme" } });
    const row = await prisma.toolPolicy.findUniqueOrThrow({ where: { name: "acme.open_case" } });
    expect(row.personalData).toBeNull();
    expect(row.proposal).toMatchObject({ personalData: { subject: "email", args: ["name"], result: ["caseOwner"] } });
    const accepted = await editTool(prisma, { name: row.name, expectedVersion: row.policyVersion, changes: {} }, admin, "accept");
    expect(accepted.ok).toBe(true);
    expect((await prisma.toolPolicy.findUniqueOrThrow({ where: { name: row.name } })).personalData).toEqual({ subject: "email", args: ["name"], result: ["caseOwner"] });
  });
});

const ADA = { to: "ada.lovelace@example.com", name: "Ada Lovelace" };
const BOB = { to: "bob.babbage@example.com", name: "Bob Babbage" };
const viewer = { id: "usr_auditor", email: "auditor@example.com", name: "Auditor", role: "admin" as const };

async function engine(): Promise<SagaEngine> {
  return new SagaEngine({ store: new PrismaSagaStore(await getPrisma()), registry: createSupportToolRegistry(getHostedWorld()), recheckAfterMs: 10, backoffMs: 5 });
}

/** Everything the database holds, as text: the SQLite files' bytes, or pg_dump's output. */
async function databaseBytes(): Promise<string> {
  const prisma = await getPrisma();
  if (databaseKind(prisma) === "postgresql") return execFileSync("pg_dump", ["--no-owner", directTestPostgresUrl(process.env.DATABASE_URL!)], { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
  const file = sqliteFilePath(process.env.DATABASE_URL);
  return [file, `${file}-wal`].filter((f) => existsSync(f)).map((f) => readFileSync(f).toString("latin1")).join("\n");
}

describe("rows written before the declaration", () => {
  it("are sealed when an admin declares the tool's personal fields", async () => {
    const prisma = await getPrisma();
    const e = await engine();
    const run = await e.startRun({ title: "Before the declaration", agent: "support-agent" });
    const row = await prisma.toolPolicy.findUniqueOrThrow({ where: { name: "create_email_draft" } });
    if (row.personalData) await editTool(prisma, { name: row.name, expectedVersion: row.policyVersion, changes: { personalData: null } }, admin);
    personalDataVault(prisma).forget();
    await run.call("create_email_draft", { to: "dora.early@example.com", subject: "Early", body: "Dear Dora Early" });
    expect(await databaseBytes()).toContain("dora.early@example.com");
    const now = await prisma.toolPolicy.findUniqueOrThrow({ where: { name: "create_email_draft" } });
    await editTool(prisma, { name: now.name, expectedVersion: now.policyVersion, changes: { personalData: { subject: "to", args: ["body"], result: [] } } }, admin);
    const [step] = await new PrismaSagaStore(prisma).listSteps(run.runId);
    expect(step?.args).toEqual({ to: "dora.early@example.com", subject: "Early", body: "Dear Dora Early" });
    expect(JSON.stringify(await prisma.step.findUniqueOrThrow({ where: { id: step!.id } }))).not.toContain("dora.early@example.com");
    for (const text of ["dora.early@example.com", "Dora Early"]) expect((await databaseBytes()).includes(text), text).toBe(false);
  });
});

describe("the master key", () => {
  it("a wrong one is a clear error that says what to do", async () => {
    const { PersonalDataVault } = await import("@/lib/core/privacy/personal-data-vault");
    const wrong = new PersonalDataVault(await getPrisma(), () => ({ key: Buffer.alloc(32, 7), source: "/etc/wrong.key" }));
    await expect(wrong.loadKeyring()).rejects.toThrow(/master key from \/etc\/wrong.key .* is not the one this database's personal data is sealed with.*SAGABOARD_MASTER_KEY_FILE/);
  });
});

describe("sealed fields and erasure", () => {
  let adaRun = "";
  let bobRun = "";
  let adaStep = "";
  let bobStep = "";
  let adaPivot = "";

  beforeAll(async () => {
    const prisma = await getPrisma();
    const row = await prisma.toolPolicy.findUniqueOrThrow({ where: { name: "create_email_draft" } });
    if (!row.personalData) {
      await editTool(prisma, { name: row.name, expectedVersion: row.policyVersion, changes: { personalData: { subject: "to", args: ["body"], result: [] } } }, admin);
    }
    const send = await prisma.toolPolicy.findUniqueOrThrow({ where: { name: "send_email" } });
    await editTool(prisma, { name: send.name, expectedVersion: send.policyVersion, changes: { personalData: { subject: "to", args: ["body"], result: [] } } }, admin);
    personalDataVault(prisma).forget();
    const e = await engine();
    for (const who of [ADA, BOB]) {
      const run = await e.startRun({ title: "Draft a letter", agent: "support-agent" });
      const letter = { to: who.to, subject: "Your order", body: `Dear ${who.name}, your order shipped.` };
      const out = await run.call("create_email_draft", letter);
      expect(out.status).toBe("ok");
      const pivot = await run.requestPivot({ summary: "Send the letter.", plan: [{ tool: "send_email", args: letter }] });
      if (who === ADA) {
        adaRun = run.runId;
        adaPivot = pivot.id;
      } else bobRun = run.runId;
    }
    const store = new PrismaSagaStore(prisma);
    adaStep = (await store.listSteps(adaRun))[0]!.id;
    bobStep = (await store.listSteps(bobRun))[0]!.id;
  });

  it("stores the declared fields sealed and reads them back in clear", async () => {
    const prisma = await getPrisma();
    const raw = await prisma.step.findUniqueOrThrow({ where: { id: adaStep } });
    const args = raw.args as Record<string, string>;
    expect(args.to).toMatch(/^sealed:v1:sk_/);
    expect(args.body).toMatch(/^sealed:v1:sk_/);
    expect(args.subject).toBe("Your order");
    const step = await new PrismaSagaStore(prisma).getStep(adaStep);
    expect(step?.args).toEqual({ to: ADA.to, subject: "Your order", body: `Dear ${ADA.name}, your order shipped.` });
    expect(JSON.stringify(await prisma.pivot.findUniqueOrThrow({ where: { id: adaPivot } }))).not.toContain(ADA.to);
    expect((await new PrismaSagaStore(prisma).getPivot(adaPivot))?.plan[0]?.args).toMatchObject({ to: ADA.to });
    expect(JSON.stringify(await getRunTimeline({ actor: viewer, runId: adaRun }))).toContain(ADA.to);
    const bytes = await databaseBytes();
    for (const text of [ADA.to, ADA.name, BOB.to, BOB.name]) expect(bytes.includes(text), text).toBe(false);
  });

  it("seals a template's copies of a personal value in the compensation and the correction draft", async () => {
    const prisma = await getPrisma();
    const store = new PrismaSagaStore(prisma);
    const run = await store.createRun({ id: `run_copies${Date.now().toString(36)}`, title: "copies", agent: "support-agent", onBehalfOf: null, metadata: {} }, { type: "run.started", actor: { type: "system", id: "test" } });
    const { step } = await store.insertIntent(
      {
        id: `stp_copies${Date.now().toString(36)}`, runId: run.id, stepIdx: 0, tool: "create_email_draft", toolClass: "REVERSIBLE", stepKey: stepKey(run.id, 0, "create_email_draft"),
        args: { to: "carol@example.com", subject: "Hi", body: "Dear Carol Copies" }, argsHash: "h", phase: "STAGING", policyVersion: 1, approvalId: null, planItemIdx: null,
        compensation: { tool: "delete_email_draft", args: { note: "drafted for carol@example.com" } }, compensationKey: null,
        correction: { audience: ["customer"], subject: "About carol@example.com", body: "We wrote to carol@example.com by mistake." }, audience: ["customer"],
      },
      { type: "step.intended", actor: { type: "system", id: "test" } },
    );
    expect(step.correction?.body).toBe("We wrote to carol@example.com by mistake.");
    const raw = await prisma.step.findUniqueOrThrow({ where: { id: step.id } });
    expect(JSON.stringify(raw)).not.toContain("carol@example.com");
    expect(JSON.stringify(raw)).not.toContain("Carol Copies");
    const outcome = await store.updateStep(step.id, { status: ["INTENDED"] }, { status: "CONFIRMED", externalRef: "drf_1", result: { draftId: "drf_1", echo: "sent to carol@example.com" } }, { type: "step.confirmed", actor: { type: "system", id: "test" } });
    expect(outcome?.result).toEqual({ draftId: "drf_1", echo: "sent to carol@example.com" });
    expect(JSON.stringify(await prisma.step.findUniqueOrThrow({ where: { id: step.id } }))).not.toContain("carol@example.com");
    // An escalation's detail copying the compensation still out there is sealed too, and read back in clear.
    const raised = await store.createEscalation({ id: `esc_copies${Date.now().toString(36)}`, runId: run.id, stepId: step.id, kind: "COMPENSATION_FAILED", title: "Compensation failed", detail: { compensation: { args: { note: "drafted for carol@example.com" } } }, owner: null, dedupeKey: `test:${step.id}` }, { type: "escalation.raised", actor: { type: "system", id: "test" } });
    expect(raised.escalation.detail).toEqual({ compensation: { args: { note: "drafted for carol@example.com" } } });
    expect(JSON.stringify(await prisma.escalation.findUniqueOrThrow({ where: { id: raised.escalation.id } }))).not.toContain("carol@example.com");
    // The desk's copy of a correction is in clear until the person is erased; then its words are gone.
    await store.createCorrection({ id: `cor_copies${Date.now().toString(36)}`, runId: run.id, stepId: step.id, audience: ["customer"], rank: 2, subject: "About carol@example.com", body: "We wrote to carol@example.com by mistake.", draftedBy: null }, { type: "correction.drafted", actor: { type: "system", id: "test" } });
    const erased = await eraseSubject(prisma, { subject: "carol@example.com", reason: "request 883", now: true }, admin);
    expect(erased.ok).toBe(true);
    const correction = await prisma.correction.findUniqueOrThrow({ where: { stepId: step.id } });
    expect(correction.subject).toMatch(/^erased on /);
    expect(correction.recipients).toBeNull();
    expect(await databaseBytes()).not.toContain("carol@example.com");
  });

  it("refuses bad input with errors that say what to do", async () => {
    const prisma = await getPrisma();
    await expect(eraseSubject(prisma, { subject: ADA.to, reason: "  " }, admin)).rejects.toThrow(/Say why/);
    await expect(eraseSubject(prisma, { subject: "", reason: "GDPR art. 17 request 881" }, admin)).rejects.toThrow(/Name the subject/);
    const unknown = await eraseSubject(prisma, { subject: "nobody@example.com", reason: "request 882" }, admin);
    expect(unknown).toMatchObject({ ok: false, reason: "unknown_subject" });
  });

  it("refuses while the subject's step can still be pulled back, naming the run; --now makes it an escalation", async () => {
    const prisma = await getPrisma();
    const erasedBefore = await prisma.subjectKey.count({ where: { wrappedKey: null } });
    const refused = await eraseSubject(prisma, { subject: ` ${ADA.to.toUpperCase()} `, reason: "request 881" }, admin);
    expect(refused.ok).toBe(false);
    if (refused.ok || refused.reason !== "open_work") throw new Error(`expected open_work, got ${JSON.stringify(refused)}`);
    expect(refused.runs).toEqual([adaRun]);
    expect(refused.message).toContain(adaRun);
    expect(await prisma.subjectKey.count({ where: { wrappedKey: null } })).toBe(erasedBefore);

    const keysBefore = await prisma.subjectKey.findMany({ where: { wrappedKey: { not: null } } });
    // An agent's re-sent request's stored answer carried the step in clear (Idempotency-Key).
    await prisma.idempotentRequest.create({ data: { id: "idr_ada", principal: "tok_x", key: "call-ada", method: "POST", path: `/api/v1/runs/${adaRun}/calls`, requestHash: "h", state: "DONE", responseStatus: 200, responseBody: { step: { id: adaStep, args: { to: ADA.to } } } } });
    const erased = await eraseSubject(prisma, { subject: ADA.to, reason: "request 881", now: true }, admin);
    expect(erased).toMatchObject({ ok: true, steps: 1 });
    if (!erased.ok) return;
    expect(erased.escalations).toHaveLength(1);
    const escalation = await prisma.escalation.findUniqueOrThrow({ where: { id: erased.escalations[0]! } });
    expect(escalation).toMatchObject({ runId: adaRun, stepId: adaStep, kind: "COMPENSATION_FAILED", status: "OPEN" });
    expect(escalation.title).toContain("can no longer be compensated automatically");
    // No unwind or revoke will run the compensation with erased arguments: the step says it failed.
    expect(await prisma.step.findUniqueOrThrow({ where: { id: adaStep } })).toMatchObject({ status: "COMPENSATION_FAILED", compensationState: "FAILED" });

    const again = await eraseSubject(prisma, { subject: ADA.to, reason: "request 881" }, admin);
    expect(again).toMatchObject({ ok: false, reason: "already_erased" });

    const day = erased.erasedAt.toISOString().slice(0, 10);
    const store = new PrismaSagaStore(prisma);
    expect((await store.getStep(adaStep))?.args).toEqual({ to: `erased on ${day}`, subject: "Your order", body: `erased on ${day}` });
    expect((await store.getStep(bobStep))?.args).toEqual({ to: BOB.to, subject: "Your order", body: `Dear ${BOB.name}, your order shipped.` });

    const event = (await prisma.auditEvent.findMany({ where: { scope: "privacy", type: "SUBJECT_ERASED" } })).find((e) => (e.data as { reason?: string }).reason === "request 881")!;
    expect(event.actor).toBe("user:admin@example.com");
    expect(JSON.stringify(event.data)).not.toContain(ADA.to);
    expect(event.data).toMatchObject({ reason: "request 881", steps: 1, runs: [adaRun] });

    const timeline = JSON.stringify(await getRunTimeline({ actor: viewer, runId: adaRun }));
    expect(timeline).toContain(`erased on ${day}`);
    expect(timeline).not.toContain(ADA.to);
    const screen = await getPivotScreen({ actor: viewer, pivotId: adaPivot });
    expect(JSON.stringify(screen)).toContain(`erased on ${day}`);
    expect(JSON.stringify(await getRunTimeline({ actor: viewer, runId: bobRun }))).toContain(BOB.to);

    // The run still unwinds: the erased step is left to the person (no compensation with erased arguments).
    const report = await (await engine()).unwind(adaRun, { type: "system", id: "test" }, "customer cancelled");
    expect(report.status).toBe("NEEDS_ATTENTION");
    expect(report.compensated).toEqual([]);
    expect(report.compensationFailed).toEqual([0]);

    const verification = await verifyAuditChains({ actor: viewer });
    expect(verification.verified).toBe(true);

    const bytes = await databaseBytes();
    for (const text of [ADA.to, ADA.name]) expect(bytes.includes(text), text).toBe(false);
    // The destroyed data key's wrapped bytes are gone from the files too (secure_delete, WAL truncated; VACUUM).
    expect(await prisma.idempotentRequest.findUnique({ where: { id: "idr_ada" } })).toBeNull();
    const destroyed = keysBefore.filter((k) => erased.keyIds.includes(k.id));
    expect(destroyed).toHaveLength(1);
    for (const k of destroyed) expect(bytes.includes(k.wrappedKey!.slice(3))).toBe(false);
    for (const k of keysBefore.filter((k) => !erased.keyIds.includes(k.id))) expect(bytes.includes(k.wrappedKey!.slice(3)), "a live key is still stored").toBe(true);
  });

  it("the admin screen's use case erases the same way, for admins only, and lists erasures without the subject", async () => {
    const reviewer = { ...viewer, id: "usr_reviewer", email: "reviewer@example.com", role: "reviewer" as const };
    await expect(erasePersonalData({ actor: reviewer, subject: BOB.to, reason: "request 990" })).rejects.toThrow();
    const done = await erasePersonalData({ actor: viewer, subject: BOB.to, reason: "request 990", now: true });
    expect(done.ok).toBe(true);
    const list = await findErasures({ actor: viewer });
    expect(list.map((e) => e.reason)).toEqual(["request 990", "request 881", "request 883"]);
    expect(list[0]?.by).toBe("user:auditor@example.com");
    expect(JSON.stringify(list)).not.toContain(BOB.to);
    expect((await verifyAuditChains({ actor: viewer })).verified).toBe(true);
  });

  it("--when-settled schedules the erasure instead of refusing; the app's sweep erases once the step's window has closed", async () => {
    const prisma = await getPrisma();
    const run = await (await engine()).startRun({ title: "Draft a letter", agent: "support-agent" });
    const cleo = "cleo.scheduled@example.com";
    expect((await run.call("create_email_draft", { to: cleo, subject: "Hi", body: "Dear Cleo Scheduled" })).status).toBe("ok");
    const scheduled = await eraseSubject(prisma, { subject: cleo, reason: "request 991", whenSettled: true }, admin);
    expect(scheduled).toMatchObject({ ok: false, reason: "scheduled", runs: [run.runId] });
    const waiting = () => prisma.setting.count({ where: { key: { startsWith: "privacy.scheduledErasure:" } } });
    expect(await waiting()).toBe(1);
    const duty = startStuckRunDuty({ prisma: getPrisma, everyMs: 3_600_000, log: () => undefined });
    try {
      expect(await duty.eraseScheduledNow()).toEqual({ erased: 0, waiting: 1 });
      // A day passes: the draft's revocation window closes, nothing is left that needs the data.
      await prisma.step.updateMany({ where: { runId: run.runId }, data: { updatedAt: new Date(Date.now() - 2 * 86_400_000) } });
      expect(await duty.eraseScheduledNow()).toEqual({ erased: 1, waiting: 0 });
    } finally {
      duty.stop();
    }
    expect(await waiting()).toBe(0);
    const [step] = await new PrismaSagaStore(prisma).listSteps(run.runId);
    expect(step?.args).toMatchObject({ to: expect.stringMatching(/^erased on /) });
    const events = await prisma.auditEvent.findMany({ where: { scope: "privacy" }, orderBy: { seq: "desc" }, take: 2 });
    expect(events.map((e) => e.type)).toEqual(["SUBJECT_ERASED", "SUBJECT_ERASURE_SCHEDULED"]);
    expect(events[0]?.actor).toContain("scheduled-erasure:user:admin@example.com");
    expect((await verifyAuditChains({ actor: viewer })).verified).toBe(true);
    for (const text of [cleo, "Cleo Scheduled"]) expect((await databaseBytes()).includes(text), text).toBe(false);
  });

  it("rotating the master key re-wraps every key: the new key reads the data, the old one is refused at start", async () => {
    const prisma = await getPrisma();
    const { PersonalDataVault } = await import("@/lib/core/privacy/personal-data-vault");
    const { rotateMasterKey } = await import("@/lib/server/privacy/rotate-master-key");
    const next = Buffer.alloc(32, 9);
    await rotateMasterKey(prisma, next, "test");
    const rotated = new PersonalDataVault(prisma, () => ({ key: next, source: "new.key" }));
    const raw = await prisma.step.findUniqueOrThrow({ where: { id: bobStep } });
    expect(await rotated.reveal(raw.args)).toMatchObject({ subject: "Your order" });
    const stale = new PersonalDataVault(prisma, () => ({ key: Buffer.alloc(32, 1), source: "old.key" }));
    await expect(stale.loadKeyring()).rejects.toThrow(/is not the one this database/);
  });
});
