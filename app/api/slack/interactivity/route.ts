/**
 * Slack's interactivity Request URL: button clicks on posted pivots and the reject modal's
 * submission. Slack signs each request; lib/desks/approvals/answer-slack-interaction.ts checks the
 * signature on the raw body before anything else. Off (404) unless Slack is configured.
 */
import { getPrisma } from "@/lib/core/db/prisma";
import { toErrorResponse } from "@/lib/core/error-response";
import { answerSlackInteraction } from "@/lib/desks/approvals/answer-slack-interaction";
import { publicBaseUrl } from "@/lib/server/notifications/compose-notification";
import { slackConfig } from "@/lib/server/slack/slack-config";

/** Slack's interactivity payloads are small; anything larger is not Slack's. */
const MAX_BYTES = 256 * 1024;

export async function POST(request: Request): Promise<Response> {
  try {
    const config = slackConfig();
    if (!config) return Response.json({ error: "Slack is not configured on this server: set SAGABOARD_SLACK_BOT_TOKEN and SAGABOARD_SLACK_SIGNING_SECRET." }, { status: 404 });
    const body = await request.text();
    if (Buffer.byteLength(body) > MAX_BYTES) return Response.json({ error: "The body is larger than Slack's interactivity payloads are." }, { status: 413 });
    const answer = await answerSlackInteraction({
      prisma: await getPrisma(),
      config,
      body,
      timestamp: request.headers.get("x-slack-request-timestamp"),
      signature: request.headers.get("x-slack-signature"),
      nowSec: Math.floor(Date.now() / 1000),
      baseUrl: publicBaseUrl(),
    });
    return answer.body === null ? new Response(null, { status: answer.status }) : Response.json(answer.body, { status: answer.status });
  } catch (e) {
    return toErrorResponse(e);
  }
}
