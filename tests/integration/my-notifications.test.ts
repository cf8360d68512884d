/**
 * My notifications on a real database (SQLite, or PostgreSQL with SAGABOARD_TEST_PG=1) and a real
 * local SMTP server: each person's own choice decides whether a waiting pivot, an escalation or a
 * correction reaches them by email. Off takes a reviewer off (even when a team list names them), on
 * adds an admin, a role that may not act on a topic cannot ask for it, and a role's default comes
 * back when the choice is set back to it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sharedSagaStore } from "@/lib/core/db/prisma-saga-store";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { resetHostedWorld } from "@/lib/demo/sim/host";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import { ApiError } from "@/packages/client/src/protocol/errors";
import { emailRecipients } from "@/lib/server/notifications/fan-out-notifications";
import { findMyNotifications, saveMyNotifications } from "@/lib/server/notifications/my-notifications";
import { Notifier } from "@/lib/server/notifications/notifier";
import { saveNotificationTeam } from "@/lib/server/sla/save-sla-settings";
import { startSmtpInbox, type SmtpInbox } from "../support/smtp-inbox";
import { addSupportTools, useTestDatabase } from "../api/api-test-kit";

const getPrisma = useTestDatabase("my-notifications");
const apology = { to: "bo@example.com", subject: "Your replacement is on its way", body: "We re-shipped order 2001." };

let inbox: SmtpInbox;
beforeAll(async () => {
  inbox = await startSmtpInbox();
  await addSupportTools();
});
afterAll(() => inbox.close());

async function person(id: string, role: string, email = `${id}@example.com`) {
  const prisma = await getPrisma();
  return prisma.user.create({ data: { id, email, name: id, role, passwordHash: null }, select: { id: true, email: true, role: true } }) as Promise<{ id: string; email: string; role: "admin" | "reviewer" | "support" | "viewer" }>;
}

async function engine(): Promise<SagaEngine> {
  return new SagaEngine({ store: sharedSagaStore(await getPrisma()), registry: createSupportToolRegistry(resetHostedWorld({ searchLagMs: 0 })), recheckAfterMs: 10, backoffMs: 5 });
}

describe("my notifications", () => {
  it("shows each role its defaults, refuses what a role may not ask for, and saves nothing from a refused form", async () => {
    const prisma = await getPrisma();
    const rita = await person("usr_mn_rita", "reviewer");
    const sam = await person("usr_mn_sam", "support");
    const vic = await person("usr_mn_vic", "viewer");
    const on = async (u: typeof rita) => Object.fromEntries((await findMyNotifications(prisma, u)).map((t) => [t.topic, t.email]));
    expect(await on(rita)).toEqual({ pivot_waiting: true, escalation_raised: true, sla_reminder: true, sla_breached: true, correction_waiting: false });
    expect(await on(sam)).toEqual({ pivot_waiting: false, escalation_raised: false, sla_reminder: false, sla_breached: false, correction_waiting: true });
    expect((await findMyNotifications(prisma, vic)).every((t) => !t.allowed && !t.email)).toBe(true);
    expect((await findMyNotifications(prisma, sam)).find((t) => t.topic === "pivot_waiting")?.notAllowedBecause).toBe("your role (support) cannot decide pivots");

    // Support asking for pivots (with a valid change beside it): refused, and the valid change is not saved either.
    const refused = await saveMyNotifications(prisma, sam, { correction_waiting: false, pivot_waiting: true }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).code).toBe("FORBIDDEN");
    expect((refused as ApiError).message).toContain("your role (support) cannot decide pivots");
    expect(await on(sam)).toMatchObject({ correction_waiting: true });
    const unknown = (await saveMyNotifications(prisma, rita, { revoke_pulled: true, pivot_wating: false }).catch((e: unknown) => e)) as ApiError;
    expect(unknown.code).toBe("VALIDATION_FAILED");
    expect(unknown.message).toContain("There is no notification topic revoke_pulled, pivot_wating");
    // Turning a topic off is always allowed, even for a role that never gets it.
    await saveMyNotifications(prisma, vic, { pivot_waiting: false });
    expect(await prisma.notificationPreference.count({ where: { userId: { in: [sam.id, rita.id] } } })).toBe(0);
  });

  it("decides who is emailed: a reviewer who turned pivots off gets none, an admin who turned them on gets them, back to the default restores the role's", async () => {
    const prisma = await getPrisma();
    await prisma.webhook.updateMany({ data: { enabled: false } });
    const rita = await person("usr_mn_rita2", "reviewer");
    const ray = await person("usr_mn_ray", "reviewer");
    const ada = await person("usr_mn_ada", "admin");
    const sue = await person("usr_mn_sue", "support");
    await saveMyNotifications(prisma, rita, { pivot_waiting: false });
    await saveMyNotifications(prisma, ada, { pivot_waiting: true, correction_waiting: true });
    await saveMyNotifications(prisma, sue, { correction_waiting: false });

    const n = new Notifier({ prisma, store: sharedSagaStore(prisma), notifierId: "notifier-mine", mailer: inbox.mailer, baseUrl: "http://sagaboard.test", backoffMs: 50, slas: false });
    const e = await engine();
    const run = await e.startRun({ title: "Choices test run", agent: "support-agent", onBehalfOf: "bo@example.com" });
    await run.call("create_email_draft", apology);
    const pivot = await run.requestPivot({ summary: "Email Bo about the reship.", plan: [{ tool: "send_email", args: apology }] });
    for (let i = 0; i < 3; i++) await n.runOnce();

    await inbox.waitFor(ray.email, pivot.id);
    await inbox.waitFor(ada.email, pivot.id);
    const aboutPivot = inbox.mails.filter((m) => m.text.includes(pivot.id));
    expect(aboutPivot.some((m) => m.to.includes(rita.email))).toBe(false);
    const recipients = await prisma.notificationDelivery.findMany({ where: { channel: "email", event: { topic: "pivot_waiting", subjectId: pivot.id } }, select: { target: true } });
    expect(recipients.map((r) => r.target)).toContain(ada.email);
    expect(recipients.map((r) => r.target)).not.toContain(rita.email);

    // Corrections: support who turned them off are left out, the admin who asked is in.
    expect(await emailRecipients(prisma, { topic: "correction_waiting", subjectId: null, data: {} })).toEqual(expect.arrayContaining([ada.email]));
    expect(await emailRecipients(prisma, { topic: "correction_waiting", subjectId: null, data: {} })).not.toContain(sue.email);

    // Off wins over a team list that names the person; a disabled admin gets nothing they asked for.
    await saveNotificationTeam(prisma, { name: "mn-team", emails: [rita.email, "leads@example.com"], by: "admin@example.com" });
    await prisma.toolPolicy.update({ where: { name: "send_email" }, data: { owner: "mn-team" } });
    await saveMyNotifications(prisma, rita, { escalation_raised: false });
    const other = await e.startRun({ title: "Held email run", agent: "support-agent" });
    expect((await other.call("send_email", apology)).status).toBe("approval_required");
    const hold = await prisma.escalation.findFirstOrThrow({ where: { runId: other.runId, kind: "APPROVAL_REQUIRED" } });
    await prisma.user.update({ where: { id: ada.id }, data: { disabledAt: new Date() } });
    await saveMyNotifications(prisma, { ...ada }, { escalation_raised: true });
    expect(await emailRecipients(prisma, { topic: "escalation_raised", subjectId: hold.id, data: {} })).toEqual(["leads@example.com"]);

    // Back to the role's default: the row goes, and the reviewer hears of pivots again.
    await saveMyNotifications(prisma, rita, { pivot_waiting: true });
    expect(await prisma.notificationPreference.findUnique({ where: { userId_topic: { userId: rita.id, topic: "pivot_waiting" } } })).toBeNull();
    expect(await emailRecipients(prisma, { topic: "pivot_waiting", subjectId: pivot.id, data: {} })).toContain(rita.email);
  });
});
