import { z } from "zod";
import { type CurrentUser, type PersonRequest, userActor } from "@/lib/server/auth/current-user";
import { assertCan } from "@/lib/server/auth/roles";
import { ApiError } from "@/packages/client/src/protocol/errors";
import { appendRunAudit, writeTransaction } from "@/lib/core/db/transactions";
import { dashboardEngine, withDb } from "@/lib/desks/dashboard/context";
import { getPrisma } from "@/lib/core/db/prisma";
import { sharedSagaStore } from "@/lib/core/db/prisma-saga-store";
import { SagaError } from "@/packages/client/src/saga/errors";
import { CorrectionStatus, PivotStatus } from "@/packages/client/src/saga/vocabulary";
import { enqueueTask } from "@/lib/server/worker/enqueue-task";
import type { TSendCorrectionPayload } from "@/packages/client/src/protocol/tasks/send-correction-payload";
import { WorkerTaskKind } from "@/packages/client/src/protocol/tasks/vocabulary";
import { assertHeldBy, assertNotClosed, assertVersion } from "./correction-guard";
import { CORRECTION_AGENT, CORRECTION_INCLUDE, queueItem, recipientsOf, sendRunId, type CorrectionRowWithRefs } from "./correction-view";
import { correctionNotFound, ZCorrectionId } from "./get-correction";
import { settleCorrectionSends } from "./settle-correction-send";
import type { TSendCorrectionResult } from "./views";

/** A send: made on the version of the text the person read and approved. */
export const ZSendCorrection = z.object({
  /** The version shown when Send was confirmed (the page's `version`). */
  expectedVersion: z.number().int().min(0),
});
/** A send as the page asks it. */
export type TSendCorrection = z.input<typeof ZSendCorrection>;


/** The exact calls a person approves: one `send_email` per recipient, the text as it stands. */
function messagesOf(row: CorrectionRowWithRefs): TSendCorrectionPayload["messages"] {
  return recipientsOf(row).map((to) => ({ to, subject: row.subject, body: row.body }));
}

/**
 * Makes sure the approved send exists, step by step, each step idempotent so a repeat (or a
 * request that died halfway) finishes it: the send run (id derived from the correction), its pivot
 * whose plan is the `send_email` calls, that pivot approved by the person (a person's approval,
 * bound to the plan hash), and the worker task (deduplicated by `send-correction:<id>`). The
 * server never calls the email provider: the worker, which holds its credentials, does.
 */
async function ensureSend(row: CorrectionRowWithRefs, user: CurrentUser): Promise<string> {
  const runId = sendRunId(row.id);
  const messages = messagesOf(row);
  const store = sharedSagaStore(await getPrisma());
  // The draft's subject usually says "Correction:" already (the tool's template); the run says it once.
  const title = /^correction:/i.test(row.subject.trim()) ? row.subject.trim() : `Correction: ${row.subject}`;
  if (!(await store.getRun(runId))) {
    try {
      await store.createRun(
        { id: runId, title, agent: CORRECTION_AGENT, onBehalfOf: row.sentBy ?? user.email, metadata: { correctionId: row.id, answersRun: row.runId, answersStep: row.stepId } },
        { type: "run.started", actor: userActor(user), data: { title, correctionId: row.id } },
      );
    } catch (e) {
      // Two requests at once: the other one created it.
      if (!(e instanceof SagaError && e.code === "CONFLICT") || !(await store.getRun(runId))) throw e;
    }
  }
  const engine = await dashboardEngine();
  const run = await engine.resume(runId);
  const to = messages.map((m) => m.to).join(", ");
  const pivot = await run.requestPivot({
    summary: `Send the correction ${row.id} to ${to}, approved by ${row.sentBy ?? user.email}: it answers step ${row.step.stepIdx} (${row.step.tool}) of run ${row.runId}.`,
    plan: messages.map((args) => ({ tool: "send_email", args })),
  });
  if (pivot.status === PivotStatus.PENDING) {
    try {
      await engine.decidePivot(pivot.id, { approve: true, actor: userActor(user), planHash: pivot.planHash });
    } catch (e) {
      const now = await store.getPivot(pivot.id);
      if (!(e instanceof SagaError && e.code === "PIVOT_CONFLICT") || now?.status !== PivotStatus.APPROVED) throw e;
    }
  } else if (pivot.status === PivotStatus.REJECTED) {
    throw new ApiError("CONFLICT", `The send of correction ${row.id} was rejected (${pivot.reason ?? "no reason"}); nothing was sent.`);
  }
  const payload: TSendCorrectionPayload = { correctionId: row.id, messages };
  const { task } = await enqueueTask(await getPrisma(), {
    kind: WorkerTaskKind.SEND_CORRECTION,
    runId,
    tools: ["send_email"],
    payload,
    dedupeKey: `send-correction:${row.id}`,
    actor: userActor(user),
  });
  return task.id;
}

/** How long a repeated Send waits for the first request to queue the send before finishing it itself. */
const REPEAT_WAIT_MS = 10_000;

/** The send task of a correction, once the request that approved it has queued it (null: not within the wait). */
async function waitForSendTask(correctionId: string): Promise<string | null> {
  const deadline = Date.now() + REPEAT_WAIT_MS;
  for (;;) {
    const task = await withDb((prisma) => prisma.workerTask.findUnique({ where: { dedupeKey: `send-correction:${correctionId}` }, select: { id: true } }));
    if (task) return task.id;
    if (Date.now() >= deadline) return null;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Support approves and sends a correction they hold. Sending is a logged IRREVERSIBLE step of its
 * own: the correction is fenced on its version, DRAFT and the person's claim, and set SENDING with
 * its audit event in one transaction; then the send run, its approved pivot and the worker task are
 * made sure of (`ensureSend`). Double clicks, two tabs, two people and a retried request all land
 * on that one fence and that one run, so exactly one message goes out per recipient: the first wins,
 * the same person repeating it gets the same send back (`repeated: true`), anyone else is told who
 * sent it. A sent or dismissed correction is refused (422) and nothing changes.
 */
export async function sendCorrection({ actor, correctionId, ...request }: PersonRequest<{ correctionId: string } & TSendCorrection>): Promise<TSendCorrectionResult> {
  assertCan(actor, "correction.handle");
  const id = ZCorrectionId.parse(correctionId);
  const { expectedVersion } = ZSendCorrection.parse(request);
  const read = () => withDb((prisma) => prisma.correction.findUnique({ where: { id }, include: CORRECTION_INCLUDE }));
  let row = await read();
  if (!row) throw correctionNotFound(id);
  let repeated = true;
  if (row.status === CorrectionStatus.DRAFT) {
    assertHeldBy(row, actor.email, "send");
    assertVersion(row, expectedVersion);
    const recipients = recipientsOf(row);
    if (recipients.length === 0) {
      throw new ApiError("VALIDATION_FAILED", `Correction ${id} has no recipients; edit it and name who it goes to. Nothing was sent.`, { details: [{ path: "recipients", message: "name at least one recipient" }] });
    }
    if (!row.body.trim()) {
      throw new ApiError("VALIDATION_FAILED", `Correction ${id} has an empty body; write what the recipients should read. Nothing was sent.`, { details: [{ path: "body", message: "cannot be empty" }] });
    }
    const draft = row;
    const won = await writeTransaction(await getPrisma(), async (tx, now) => {
      const { count } = await tx.correction.updateMany({
        where: { id, status: CorrectionStatus.DRAFT, claimedBy: actor.email, version: expectedVersion },
        data: { status: CorrectionStatus.SENDING, sentBy: actor.email, version: { increment: 1 } },
      });
      if (count === 1) {
        await appendRunAudit(tx, now, draft.runId, draft.stepId, {
          type: "correction.send_requested",
          actor: userActor(actor),
          data: { correctionId: id, recipients, subject: draft.subject, body: draft.body, sendRunId: sendRunId(id), version: expectedVersion + 1 },
        });
      }
      return count === 1;
    });
    repeated = !won;
    row = (await read())!;
  }
  if (row.status === CorrectionStatus.DRAFT) {
    // Lost the fence to a change that left it a draft (an edit, a release): say which.
    assertHeldBy(row, actor.email, "send");
    assertVersion(row, expectedVersion);
    throw new ApiError("CONFLICT", `Correction ${id} changed while it was being sent; reload it and try again. Nothing was sent.`);
  }
  if (row.status === CorrectionStatus.SENDING && row.sentBy !== actor.email) {
    throw new ApiError("CONFLICT", `${row.sentBy ?? "Someone"} already approved correction ${id}; it is being sent once, by them. Nothing more will be sent.`, {
      details: [{ path: "status", message: "being sent" }],
    });
  }
  if (row.status !== CorrectionStatus.SENDING) assertNotClosed(row, "sent again");
  // A repeat (double click, second tab, retry) lets the request that won the fence finish the send
  // (two at once would propose two pivots); only if that one died halfway does a repeat finish it.
  const taskId = (repeated ? await waitForSendTask(id) : null) ?? (await ensureSend(row, actor));
  await settleCorrectionSends([{ id, expected: recipientsOf(row).length }]);
  const latest = (await read())!;
  return { correction: queueItem(latest, new Date()), sendRunId: sendRunId(id), taskId, repeated };
}
