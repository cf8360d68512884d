/**
 * A click in Slack on a pivot's Approve or Reject button, or the reject modal's submission: checked
 * as Slack documents (the signature over `v0:<timestamp>:<raw body>` and the timestamp within 300 s,
 * before anything is read), the Slack user mapped to a Sagaboard person by email (users.info, then
 * users.lookupByEmail must name the same user: an outside Slack Connect user whose email matches an
 * account is not that person), and the decision taken as that person through the dashboard's one path
 * (same rules: the role, the plan hash the message showed, two approvers). The message is then
 * updated with the outcome and who decided; a refusal the person can act on is an ephemeral message to
 * them. Forged or stale requests get 401; every refusal is audited.
 */
import { z } from "zod";
import type { PrismaClient } from "@/generated/prisma";
import { appendAuditLink } from "@/lib/core/db/audit-chain";
import { toPivotRecord } from "@/lib/core/db/saga-rows";
import { onConnection, writeTransaction } from "@/lib/core/db/transactions";
import type { PivotRecord } from "@/packages/client/src/saga/store";
import type { Json } from "@/packages/client/src/saga/tools";
import type { CurrentUser } from "@/lib/server/auth/current-user";
import { can, isRole } from "@/lib/server/auth/roles";
import { decidedPivotBlocks, pendingPivotBlocks, rejectModal, SlackAction } from "@/lib/server/slack/pivot-message";
import { slackClient, type SlackConfig } from "@/lib/server/slack/slack-config";
import { verifySlackRequest } from "@/lib/server/slack/slack-signature";
import { decidePivotFor } from "@/lib/desks/pivots/decide-pivot";
import type { TPivotDecisionResult } from "@/lib/desks/pivots/views";
import type { WebClient } from "@slack/web-api";

/** The chain of Slack requests that name no run (forged, stale, or from someone Sagaboard does not know). */
export const SLACK_SCOPE = "integration:slack";

/** What the route answers Slack. */
export interface SlackAnswer {
  status: number;
  body: Record<string, unknown> | null;
}

const ZButtonValue = z.object({ pivotId: z.string().min(1).max(80), planHash: z.string().min(1).max(128) });
const ZModalMetadata = ZButtonValue.extend({ channel: z.string().min(1), ts: z.string().min(1) });

const ZBlockActions = z.object({
  type: z.literal("block_actions"),
  user: z.object({ id: z.string().min(1) }),
  trigger_id: z.string().optional(),
  channel: z.object({ id: z.string() }).optional(),
  container: z.object({ channel_id: z.string().optional(), message_ts: z.string().optional() }).loose().optional(),
  message: z.object({ ts: z.string() }).loose().optional(),
  actions: z.array(z.object({ action_id: z.string(), value: z.string().optional() }).loose()).min(1),
});
const ZViewSubmission = z.object({
  type: z.literal("view_submission"),
  user: z.object({ id: z.string().min(1) }),
  view: z.object({
    callback_id: z.string(),
    private_metadata: z.string(),
    state: z.object({ values: z.record(z.string(), z.record(z.string(), z.object({ value: z.string().nullable().optional() }).loose())) }),
  }),
});
const ZPayload = z.discriminatedUnion("type", [ZBlockActions, ZViewSubmission]);

async function audit(prisma: PrismaClient, scope: string, runId: string | null, type: string, data: { [key: string]: Json }): Promise<void> {
  await writeTransaction(prisma, async (tx, now) => {
    await appendAuditLink(tx, now, { scope, runId, stepId: null, type, actor: { type: "system", id: "slack" }, data });
  });
}

/** The Sagaboard person a Slack user is, or why not (said to them in an ephemeral message). */
async function personOf(prisma: PrismaClient, client: WebClient, slackUserId: string): Promise<{ ok: true; user: CurrentUser } | { ok: false; why: string; email: string | null }> {
  const info = await client.users.info({ user: slackUserId }).catch(() => null);
  const email = info?.user?.profile?.email?.trim().toLowerCase() ?? null;
  if (!email) return { ok: false, why: "Slack does not share an email address for you with Sagaboard's app, so Sagaboard cannot tell who you are.", email };
  const same = await client.users.lookupByEmail({ email }).catch(() => null);
  if (same?.user?.id !== slackUserId) return { ok: false, why: `${email} is not a member of this Slack workspace as you, so Sagaboard does not act on it.`, email };
  const row = await onConnection(prisma, () => prisma.user.findUnique({ where: { email } }));
  if (!row || row.disabledAt !== null) return { ok: false, why: `Sagaboard has no enabled account for ${email}. Ask a Sagaboard admin to add you, then decide again.`, email };
  if (!isRole(row.role) || !can(row.role, "pivot.decide")) return { ok: false, why: `Your Sagaboard account (${email}) is a ${row.role}; deciding pivots needs the reviewer or admin role.`, email };
  return { ok: true, user: { id: row.id, email: row.email, name: row.name, role: row.role } };
}

/** The outcome in the message's words. */
function outcomeLine(result: TPivotDecisionResult, user: CurrentUser): string | null {
  const at = new Date().toISOString().replace("T", " ").slice(0, 16);
  if (result.ok) return `${result.pivot.status === "APPROVED" ? ":white_check_mark: *Approved*" : ":x: *Rejected*"} by ${user.name} (${user.email}) at ${at} UTC${result.pivot.reason ? `: ${result.pivot.reason}` : ""}`;
  return null;
}

/** Why a decision was not recorded, for the person who clicked. */
function refusalLine(result: Exclude<TPivotDecisionResult, { ok: true }>): string {
  switch (result.reason) {
    case "already_decided":
      return `This pivot was already ${result.pivot.status.toLowerCase()} by ${result.pivot.decidedBy ?? "someone"}; your decision was not recorded.`;
    case "plan_changed":
      return "The plan changed since this message was posted; nothing was decided. Open the pivot in Sagaboard to review the new plan.";
    case "run_not_waiting":
      return "The run no longer waits for this pivot; nothing was decided.";
    case "second_approver_needed":
      return "Your approval is recorded. The plan needs a second approval by another reviewer; nothing runs until then.";
    case "same_approver":
      return "You already approved this plan; the second approval must come from another reviewer. Nothing was recorded.";
  }
}

/** Updates the posted message to where the pivot stands now. */
async function refreshMessage(prisma: PrismaClient, client: WebClient, pivotId: string, channel: string, ts: string, baseUrl: string, decidedLine: string | null): Promise<void> {
  const row = await onConnection(prisma, () => prisma.pivot.findUnique({ where: { id: pivotId }, include: { run: { select: { title: true } } } }));
  if (!row) return;
  const pivot: PivotRecord = toPivotRecord(row);
  const link = `${baseUrl}/pivots/${encodeURIComponent(pivot.id)}`;
  const approvals = await onConnection(prisma, () => prisma.pivotApproval.findMany({ where: { pivotId, planHash: pivot.planHash }, orderBy: { createdAt: "asc" } }));
  const line = decidedLine ?? (pivot.status !== "PENDING" ? `*${pivot.status === "APPROVED" ? "Approved" : "Rejected"}* by ${pivot.decidedBy ?? "someone"}` : null);
  const blocks = line ? decidedPivotBlocks(pivot, row.run.title, link, line) : pendingPivotBlocks(pivot, row.run.title, link, approvals.map((a) => a.approvedBy));
  await client.chat.update({ channel, ts, text: line ? line.replace(/[*:]/g, "") : `Pivot waiting: ${row.run.title}`, blocks: blocks as never });
}

/** Decides as `user` and updates the message; a refusal goes to the person as an ephemeral message. */
async function decide(
  prisma: PrismaClient,
  client: WebClient,
  user: CurrentUser,
  where: { pivotId: string; planHash: string; channel: string; ts: string; slackUserId: string },
  decision: { approve: true } | { approve: false; reason: string },
  baseUrl: string,
): Promise<void> {
  const result = await decidePivotFor(user, {
    pivotId: where.pivotId,
    planHash: where.planHash,
    via: "slack",
    ...(decision.approve ? { approve: true, reason: null } : { approve: false, reason: decision.reason, reasonCode: "OTHER" as const }),
  });
  await refreshMessage(prisma, client, where.pivotId, where.channel, where.ts, baseUrl, outcomeLine(result, user));
  if (!result.ok) await client.chat.postEphemeral({ channel: where.channel, user: where.slackUserId, text: refusalLine(result) });
}

/** Answers one interactivity request (the raw body and Slack's two headers, as received). */
export async function answerSlackInteraction(input: {
  prisma: PrismaClient;
  config: SlackConfig;
  body: string;
  timestamp: string | null;
  signature: string | null;
  nowSec: number;
  baseUrl: string;
}): Promise<SlackAnswer> {
  const { prisma, config } = input;
  const verdict = verifySlackRequest({ signingSecret: config.signingSecret, timestamp: input.timestamp, signature: input.signature, body: input.body, nowSec: input.nowSec });
  if (!verdict.ok) {
    await audit(prisma, SLACK_SCOPE, null, "slack.request_refused", { reason: verdict.reason, timestamp: input.timestamp ?? "" });
    const words = verdict.reason === "stale_timestamp" ? "its timestamp is more than 300 s from now (a replayed request)" : verdict.reason === "bad_signature" ? "its signature does not match the signing secret" : "it carries no X-Slack-Request-Timestamp and X-Slack-Signature";
    return { status: 401, body: { error: `Refused: ${words}. Sagaboard acts only on requests Slack signed with this app's signing secret.` } };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(new URLSearchParams(input.body).get("payload") ?? "");
  } catch {
    return { status: 400, body: { error: "The body has no payload field with JSON in it, as Slack sends interactivity requests." } };
  }
  const parsed = ZPayload.safeParse(raw);
  if (!parsed.success) return { status: 200, body: null }; // another kind of interaction: nothing of Sagaboard's to do
  const payload = parsed.data;
  const client = slackClient(config);
  const person = await personOf(prisma, client, payload.user.id);

  if (payload.type === "block_actions") {
    const action = payload.actions[0]!;
    if (action.action_id !== SlackAction.approve && action.action_id !== SlackAction.reject) return { status: 200, body: null };
    const value = ZButtonValue.safeParse((() => { try { return JSON.parse(action.value ?? ""); } catch { return null; } })());
    const channel = payload.channel?.id ?? payload.container?.channel_id ?? "";
    const ts = payload.message?.ts ?? payload.container?.message_ts ?? "";
    if (!value.success || !channel || !ts) return { status: 400, body: { error: "The button's value does not name a pivot and plan hash; it was not posted by Sagaboard." } };
    const runId = (await onConnection(prisma, () => prisma.pivot.findUnique({ where: { id: value.data.pivotId }, select: { runId: true } })))?.runId ?? null;
    if (!person.ok) {
      await audit(prisma, runId ? `run:${runId}` : SLACK_SCOPE, runId, "slack.user_refused", { slackUser: payload.user.id, email: person.email ?? "", pivotId: value.data.pivotId, why: person.why });
      await client.chat.postEphemeral({ channel, user: payload.user.id, text: `Nothing was decided. ${person.why}` });
      return { status: 200, body: null };
    }
    if (action.action_id === SlackAction.reject) {
      await client.views.open({ trigger_id: payload.trigger_id ?? "", view: rejectModal(JSON.stringify({ ...value.data, channel, ts })) as never });
      return { status: 200, body: null };
    }
    await decide(prisma, client, person.user, { ...value.data, channel, ts, slackUserId: payload.user.id }, { approve: true }, input.baseUrl);
    return { status: 200, body: null };
  }

  if (payload.view.callback_id !== SlackAction.rejectModal) return { status: 200, body: null };
  const metadata = ZModalMetadata.safeParse((() => { try { return JSON.parse(payload.view.private_metadata); } catch { return null; } })());
  if (!metadata.success) return { status: 400, body: { error: "The modal's metadata does not name a pivot; it was not opened by Sagaboard." } };
  const reason = payload.view.state.values.reason?.reason?.value?.trim() ?? "";
  if (!reason) return { status: 200, body: { response_action: "errors", errors: { reason: "Say why: the agent reads the reason to revise the plan or unwind." } } };
  if (!person.ok) return { status: 200, body: { response_action: "errors", errors: { reason: `Nothing was decided. ${person.why}` } } };
  await decide(prisma, client, person.user, { ...metadata.data, slackUserId: payload.user.id }, { approve: false, reason }, input.baseUrl);
  return { status: 200, body: { response_action: "clear" } };
}
