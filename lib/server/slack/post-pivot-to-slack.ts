import type { PrismaClient } from "@/generated/prisma";
import { toPivotRecord } from "@/lib/core/db/saga-rows";
import { onConnection, writeTransaction } from "@/lib/core/db/transactions";
import { randomIds } from "@/packages/client/src/saga/ids";
import { PivotStatus } from "@/packages/client/src/saga/vocabulary";
import { pendingPivotBlocks } from "./pivot-message";
import { slackClient, type SlackConfig } from "./slack-config";

/** Where a Slack delivery goes: `channel:<id>`, or `user:<email>` (the approver, found by email). */
export function slackTarget(kind: "channel" | "user", value: string): string {
  return `${kind}:${value}`;
}

/**
 * Posts a waiting pivot to Slack with its Approve and Reject buttons, to the delivery's target, and
 * records where the message is (SlackMessage) so a decision can update it. A pivot decided before the
 * delivery's turn is not posted. Throws what Slack answered (the notifier retries, then gives up).
 */
export async function postPivotToSlack(prisma: PrismaClient, config: SlackConfig, input: { pivotId: string; target: string; baseUrl: string }): Promise<{ posted: boolean; channel: string | null }> {
  const row = await onConnection(prisma, () => prisma.pivot.findUnique({ where: { id: input.pivotId }, include: { run: { select: { title: true } } } }));
  if (!row || row.status !== PivotStatus.PENDING) return { posted: false, channel: null };
  const pivot = toPivotRecord(row);
  const client = slackClient(config);
  const [kind, ...rest] = input.target.split(":");
  const value = rest.join(":");
  let channel = value;
  if (kind === "user") {
    const found = await client.users.lookupByEmail({ email: value });
    if (!found.user?.id) throw new Error(`no Slack user has the email ${value}`);
    channel = found.user.id;
  }
  const link = `${input.baseUrl}/pivots/${encodeURIComponent(pivot.id)}`;
  const posted = await client.chat.postMessage({ channel, text: `Pivot waiting: ${row.run.title}: ${pivot.summary}`, blocks: pendingPivotBlocks(pivot, row.run.title, link) as never });
  if (!posted.channel || !posted.ts) throw new Error("Slack answered chat.postMessage without a channel and ts");
  await writeTransaction(prisma, (tx, now) => tx.slackMessage.create({ data: { id: randomIds.next("slk"), pivotId: pivot.id, channel: posted.channel!, ts: posted.ts!, planHash: pivot.planHash, createdAt: now } }));
  return { posted: true, channel: posted.channel };
}
