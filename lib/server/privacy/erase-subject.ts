/**
 * Erasing a person (lib/core/privacy/ARCHITECTURE.md, invariant 4): destroy their data keys and
 * append a SUBJECT_ERASED event, in one transaction; with `now`, the steps that could still need
 * their data to be compensated become escalations, in the same transaction. A service: the command
 * line (`npm run erase`), the admin screen's use case and the tests call it with the database and
 * the actor.
 */
import * as z from "zod";
import { Prisma, type PrismaClient } from "@/generated/prisma";
import { appendAuditLink } from "@/lib/core/db/audit-chain";
import { databaseKind, databaseNow } from "@/lib/core/db/dialect";
import { readOnConnection, writeTransaction, appendRunAudit } from "@/lib/core/db/transactions";
import { personalDataVault } from "@/lib/core/privacy/personal-data-vault";
import { scrubFreedBytes, secureDelete } from "./scrub-freed-bytes";
import { SEALED_PREFIX } from "@/lib/core/privacy/sealing";
import { validationError, zodIssuesToDetails } from "@/packages/client/src/protocol/errors";
import { randomIds } from "@/packages/client/src/saga/ids";
import { actorLabel, type Actor } from "@/packages/client/src/saga/store";
import { CompensationState, EscalationKind, EscalationStatus, StepStatus, ToolClass, UNSETTLED_STATUSES } from "@/packages/client/src/saga/vocabulary";

/** The audit chain erasures are recorded on. */
export const PRIVACY_SCOPE = "privacy";
/** The event an erasure appends. */
export const SUBJECT_ERASED = "SUBJECT_ERASED";

/** An erasure request. */
export const ZEraseSubjectRequest = z.object({
  /** The value the tools' subject field held (an email, a customer id); compared trimmed and lower-cased. */
  subject: z.string({ error: "Name the subject: the value its tools' subject field holds (an email, a customer id)." }).trim().min(1, "Name the subject: the value its tools' subject field holds (an email, a customer id).").max(500),
  /** Why (the request's reference, the rule it answers): kept in the audit log. */
  reason: z.string({ error: "Say why: the erasure request's reference or the rule it answers (kept in the audit log)." }).trim().min(1, "Say why: the erasure request's reference or the rule it answers (kept in the audit log).").max(500),
  /** Erase even though some steps may still need compensating: they become escalations. */
  now: z.boolean().default(false),
  /** With open work and without `now`: erase when the steps settle and their windows close, instead of refusing. */
  whenSettled: z.boolean().default(false),
});
/** An erasure request. */
export type TEraseSubjectRequest = z.input<typeof ZEraseSubjectRequest>;

/** A step of the subject that may still need its data. */
export interface OpenStep {
  /** The run. */
  runId: string;
  /** The step. */
  stepId: string;
  /** Its index in the run. */
  stepIdx: number;
  /** Its tool. */
  tool: string;
  /** Why it is open: unsettled, its compensation running, or inside its revocation window. */
  why: "unsettled" | "compensation_requested" | "revocation_window";
  /** The tool table's owner of its tool (who gets the escalation). */
  owner: string | null;
}

/** What an erasure did, or why it did nothing. */
export type TEraseSubjectResult =
  | {
      ok: true;
      /** When (the database clock). */
      erasedAt: Date;
      /** The keys destroyed. */
      keyIds: string[];
      /** Steps whose fields now read "erased on <date>". */
      steps: number;
      /** Escalations raised for steps that can no longer be compensated automatically (`now`). */
      escalations: string[];
    }
  | { ok: false; reason: "unknown_subject"; message: string }
  | { ok: false; reason: "already_erased"; message: string; erasedAt: Date }
  | { ok: false; reason: "open_work"; message: string; runs: string[]; steps: OpenStep[] }
  | { ok: false; reason: "scheduled"; message: string; runs: string[] };

/** The event a scheduled erasure appends (on the privacy chain, with the keyed hash, never the subject). */
export const SUBJECT_ERASURE_SCHEDULED = "SUBJECT_ERASURE_SCHEDULED";
/** Settings rows `<prefix><subject hash>` hold the erasures waiting for a subject's runs to settle. */
export const SCHEDULED_ERASURE_PREFIX = "privacy.scheduledErasure:";

/** What a scheduled erasure keeps: why, and who asked. */
const ZScheduledErasure = z.object({ reason: z.string(), requestedBy: z.string() });

interface SubjectStepRow {
  id: string;
  runId: string;
  stepIdx: number;
  tool: string;
  toolClass: string;
  status: string;
  compensationState: string;
  updatedAt: Date;
}

/** The steps whose arguments were sealed under one of `keyIds`. */
async function stepsSealedUnder(prisma: PrismaClient, keyIds: readonly string[]): Promise<SubjectStepRow[]> {
  if (keyIds.length === 0) return [];
  const args = databaseKind(prisma) === "postgresql" ? Prisma.sql`"args"::text` : Prisma.sql`"args"`;
  const likes = keyIds.map((id) => Prisma.sql`${args} LIKE ${`%${SEALED_PREFIX}${id}:%`}`);
  const rows = await readOnConnection(prisma, (db) =>
    db.$queryRaw<SubjectStepRow[]>(Prisma.sql`SELECT "id", "runId", "stepIdx", "tool", "toolClass", "status", "compensationState", "updatedAt" FROM "Step" WHERE ${Prisma.join(likes, " OR ")} ORDER BY "runId", "stepIdx"`),
  );
  return rows.map((r) => ({ ...r, stepIdx: Number(r.stepIdx), updatedAt: new Date(r.updatedAt) }));
}

/** The subject's steps that may still need its data, judged at `now`. */
async function openSteps(prisma: PrismaClient, steps: readonly SubjectStepRow[], now: Date): Promise<OpenStep[]> {
  const windows = new Map(
    (await readOnConnection(prisma, (db) => db.toolPolicy.findMany({ where: { name: { in: [...new Set(steps.map((s) => s.tool))] } }, select: { name: true, revocationWindowSec: true, owner: true } }))).map((t) => [t.name, t]),
  );
  const open: OpenStep[] = [];
  for (const s of steps) {
    const base = { runId: s.runId, stepId: s.id, stepIdx: s.stepIdx, tool: s.tool, owner: windows.get(s.tool)?.owner ?? null };
    if ((UNSETTLED_STATUSES as readonly string[]).includes(s.status)) open.push({ ...base, why: "unsettled" });
    else if (s.compensationState === CompensationState.REQUESTED) open.push({ ...base, why: "compensation_requested" });
    else if (s.status === StepStatus.CONFIRMED && (s.toolClass === ToolClass.REVERSIBLE || s.toolClass === ToolClass.COMPENSATABLE) && s.compensationState === CompensationState.NONE) {
      const window = windows.get(s.tool)?.revocationWindowSec;
      if (window && s.updatedAt.getTime() + window * 1000 > now.getTime()) open.push({ ...base, why: "revocation_window" });
    }
  }
  return open;
}

const WHY_WORDS: Record<OpenStep["why"], string> = {
  unsettled: "its outcome is not settled",
  compensation_requested: "its compensation is running",
  revocation_window: "it can still be pulled back",
};

/**
 * Erases `subject` as `actor`. Refusals are values: an unknown subject, one already erased (with
 * the date), or open work (naming the runs) unless `now`. Bad input (no subject, no reason) is a
 * validation error naming the field. Nothing is written unless everything is.
 */
export async function eraseSubject(prisma: PrismaClient, request: TEraseSubjectRequest, actor: Actor): Promise<TEraseSubjectResult> {
  const parsed = ZEraseSubjectRequest.safeParse(request);
  if (!parsed.success) throw validationError(zodIssuesToDetails(parsed.error), "The erasure");
  const { subject, reason, now: eraseNow, whenSettled } = parsed.data;
  const hash = await personalDataVault(prisma).subjectHashOf(subject);
  return eraseSubjectHash(prisma, { hash, reason, eraseNow, whenSettled }, actor);
}

/** Erases the subject whose keyed hash is `hash` (eraseSubject, and the scheduled erasures' sweep). */
async function eraseSubjectHash(prisma: PrismaClient, input: { hash: string; reason: string; eraseNow: boolean; whenSettled: boolean }, actor: Actor): Promise<TEraseSubjectResult> {
  const { hash, reason, eraseNow, whenSettled } = input;
  const vault = personalDataVault(prisma);
  const keys = await readOnConnection(prisma, (db) => db.subjectKey.findMany({ where: { subjectHash: hash }, orderBy: { createdAt: "asc" } }));
  if (keys.length === 0) {
    return { ok: false, reason: "unknown_subject", message: `No personal data is stored for that subject. Subjects are matched trimmed and lower-cased against the value of each tool's subject field (npm run tools -- list shows which field that is); check the value, or whether its tool declares personal data.` };
  }
  const live = keys.filter((k) => k.wrappedKey !== null);
  if (live.length === 0) {
    const erasedAt = keys.reduce((latest, k) => (k.erasedAt && k.erasedAt > latest ? k.erasedAt : latest), new Date(0));
    return { ok: false, reason: "already_erased", erasedAt, message: `That subject was already erased on ${erasedAt.toISOString().slice(0, 10)} (by ${keys.at(-1)?.erasedBy ?? "someone"}); nothing is left to erase.` };
  }
  const liveIds = live.map((k) => k.id);
  const steps = await stepsSealedUnder(prisma, liveIds);
  const open = await openSteps(prisma, steps, await databaseNow(prisma));
  if (open.length > 0 && !eraseNow) {
    const runs = [...new Set(open.map((o) => o.runId))];
    const list = open.map((o) => `${o.runId} step ${o.stepIdx} (${o.tool}: ${WHY_WORDS[o.why]})`).join("; ");
    if (whenSettled) {
      const by = actorLabel(actor);
      await writeTransaction(prisma, async (tx, at) => {
        const key = `${SCHEDULED_ERASURE_PREFIX}${hash}`;
        const data = { value: { reason, requestedBy: by }, updatedBy: by, updatedAt: at };
        await tx.setting.upsert({ where: { key }, create: { key, ...data }, update: data });
        await appendAuditLink(tx, at, { scope: PRIVACY_SCOPE, runId: null, stepId: null, type: SUBJECT_ERASURE_SCHEDULED, actor, data: { subjectHash: hash, reason, runs } });
      });
      return { ok: false, reason: "scheduled", runs, message: `Scheduled: the subject's data is still needed by ${list}; it will be erased as soon as those steps settle and their revocation windows close (checked every half minute by the app server), with the reason given now.` };
    }
    return {
      ok: false,
      reason: "open_work",
      runs,
      steps: open,
      message: `Not erased: the subject's data may still be needed by ${list}. Schedule the erasure for when those steps settle and their revocation windows close (--when-settled), or erase now (--now): each of them then becomes an escalation, since it can no longer be compensated automatically.`,
    };
  }

  const by = actorLabel(actor);
  await secureDelete(prisma, true);
  const result = await writeTransaction(prisma, async (tx, at) => {
    const { count } = await tx.subjectKey.updateMany({ where: { id: { in: liveIds }, wrappedKey: { not: null } }, data: { wrappedKey: null, erasedAt: at, erasedBy: by, erasedReason: reason } });
    if (count !== liveIds.length) return null; // another erasure of the same subject committed first
    const escalations: string[] = [];
    for (const o of eraseNow ? open : []) {
      const id = randomIds.next("esc");
      // A confirmed step inside its window is marked as a failed compensation, as an unwind that
      // could not compensate would: no unwind or revoke then runs its compensation with erased arguments.
      const marked =
        o.why === "revocation_window" &&
        (
          await tx.step.updateMany({
            where: { id: o.stepId, status: StepStatus.CONFIRMED, compensationState: CompensationState.NONE },
            data: { status: StepStatus.COMPENSATION_FAILED, compensationState: CompensationState.FAILED, compensationError: { reason: "subject_erased", message: "The subject's personal data was erased; the compensation can no longer run automatically." }, updatedAt: at },
          })
        ).count > 0;
      if (marked) await appendRunAudit(tx, at, o.runId, o.stepId, { type: "compensation.failed", actor, data: { reason: "subject_erased", stepIdx: o.stepIdx } });
      const dedupeKey = marked ? `compfail:${o.stepId}` : `erased:${o.stepId}`;
      // One item per step: an open one the unwind already raised for it stands.
      if (await tx.escalation.findUnique({ where: { dedupeKey }, select: { id: true } })) continue;
      await tx.escalation.create({
        data: {
          id,
          runId: o.runId,
          stepId: o.stepId,
          kind: EscalationKind.COMPENSATION_FAILED,
          status: EscalationStatus.OPEN,
          title: `Step ${o.stepIdx} (${o.tool}) can no longer be compensated automatically: its subject's personal data was erased`,
          detail: { erasure: true, why: o.why, note: `Erased on ${at.toISOString().slice(0, 10)} by ${by} while ${WHY_WORDS[o.why]}. The compensation's personal arguments are gone: answer the effect by hand in the provider's console and record the repair.` },
          owner: o.owner,
          // The unwind's own key for a failed compensation, so its mending finds this one.
          dedupeKey,
          createdAt: at,
        },
      });
      await appendRunAudit(tx, at, o.runId, o.stepId, { type: "escalation.raised", actor, data: { kind: EscalationKind.COMPENSATION_FAILED, escalationId: id, stepIdx: o.stepIdx, reason: "subject_erased" } });
      escalations.push(id);
    }
    // Correction messages are the correction desk's working copies, kept in clear for the people who
    // edit and send them: the subject's lose their words (and recipients, so none can be sent).
    const gone = `erased on ${at.toISOString().slice(0, 10)}`;
    if (steps.length > 0) {
      await tx.correction.updateMany({
        where: { stepId: { in: steps.map((st) => st.id) } },
        data: { subject: gone, body: gone, originalSubject: null, originalBody: null, recipients: Prisma.DbNull },
      });
    }
    // A re-sent request's stored answer (Idempotency-Key) may carry the step as the agent saw it, in
    // clear: the answers naming the subject's steps or runs are dropped (a repeat is then a new request).
    const answers = [...new Set([...steps.map((st) => st.id), ...steps.map((st) => st.runId)])];
    if (answers.length > 0) {
      const body = databaseKind(tx) === "postgresql" ? Prisma.sql`"responseBody"::text` : Prisma.sql`"responseBody"`;
      await tx.$executeRaw(Prisma.sql`DELETE FROM "IdempotentRequest" WHERE ${Prisma.join(answers.map((id) => Prisma.sql`${body} LIKE ${`%${id}%`}`), " OR ")}`);
    }
    await tx.setting.deleteMany({ where: { key: `${SCHEDULED_ERASURE_PREFIX}${hash}` } });
    await appendAuditLink(tx, at, {
      scope: PRIVACY_SCOPE,
      runId: null,
      stepId: null,
      type: SUBJECT_ERASED,
      actor,
      data: { subjectHash: hash, keyIds: liveIds, reason, steps: steps.length, runs: [...new Set(steps.map((s) => s.runId))], now: eraseNow, escalations },
    });
    return { erasedAt: at, escalations };
  }).finally(() => secureDelete(prisma, false));
  if (!result) {
    const again = await readOnConnection(prisma, (db) => db.subjectKey.findFirst({ where: { subjectHash: hash }, orderBy: { erasedAt: "desc" } }));
    const erasedAt = again?.erasedAt ?? new Date();
    return { ok: false, reason: "already_erased", erasedAt, message: `That subject was erased by ${again?.erasedBy ?? "someone else"} a moment ago; nothing is left to erase.` };
  }
  vault.forget();
  await scrubFreedBytes(prisma);
  return { ok: true, erasedAt: result.erasedAt, keyIds: liveIds, steps: steps.length, escalations: result.escalations };
}

/** What a sweep of scheduled erasures did. */
export interface EraseScheduledResult {
  /** Subjects erased now (their runs settled). */
  erased: number;
  /** Still waiting for their runs. */
  waiting: number;
}

/**
 * Erases the subjects whose erasure was scheduled (`whenSettled`) and whose steps have now settled,
 * as the person who asked (recorded in the actor); a schedule whose subject is gone or already
 * erased is dropped. Run by every app process beside the stuck-run sweep (stuck-run-duty.ts).
 */
export async function eraseScheduledSubjects(prisma: PrismaClient): Promise<EraseScheduledResult> {
  const rows = await readOnConnection(prisma, (db) => db.setting.findMany({ where: { key: { startsWith: SCHEDULED_ERASURE_PREFIX } }, orderBy: { updatedAt: "asc" }, take: 100 }));
  let erased = 0;
  let waiting = 0;
  for (const row of rows) {
    const hash = row.key.slice(SCHEDULED_ERASURE_PREFIX.length);
    const parsed = ZScheduledErasure.safeParse(row.value);
    const scheduled = parsed.success ? parsed.data : { reason: "scheduled erasure", requestedBy: row.updatedBy };
    const result = await eraseSubjectHash(prisma, { hash, reason: scheduled.reason, eraseNow: false, whenSettled: false }, { type: "system", id: `scheduled-erasure:${scheduled.requestedBy}` });
    if (result.ok) erased++;
    else if (result.reason === "open_work") waiting++;
    else await writeTransaction(prisma, (tx) => tx.setting.deleteMany({ where: { key: row.key } }));
  }
  return { erased, waiting };
}
