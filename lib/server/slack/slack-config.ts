/**
 * Slack as an approval channel, configured by the deployment: a Slack app's bot token and signing
 * secret (SAGABOARD_SLACK_BOT_TOKEN, SAGABOARD_SLACK_SIGNING_SECRET), the Web API's base URL
 * (SAGABOARD_SLACK_API_URL, default Slack's own; tests point it at a local fake), and where waiting
 * pivots are posted (SAGABOARD_SLACK_CHANNEL, a channel id; unset: to each approver directly, found by
 * email with users.lookupByEmail). Without the token and the secret, Slack is off.
 */
import { LogLevel, WebClient } from "@slack/web-api";

/** Slack's settings. */
export interface SlackConfig {
  /** The bot token (`xoxb-...`). */
  botToken: string;
  /** The app's signing secret: every interactivity request is checked against it. */
  signingSecret: string;
  /** The Web API's base URL, ending in `/`. */
  apiUrl: string;
  /** The channel pivots go to; null: each approver directly. */
  channel: string | null;
}

/** Slack's settings from the environment, or null when Slack is not configured. */
export function slackConfig(env: NodeJS.ProcessEnv = process.env): SlackConfig | null {
  const botToken = env.SAGABOARD_SLACK_BOT_TOKEN?.trim();
  const signingSecret = env.SAGABOARD_SLACK_SIGNING_SECRET?.trim();
  if (!botToken || !signingSecret) return null;
  const apiUrl = (env.SAGABOARD_SLACK_API_URL?.trim() || "https://slack.com/api/").replace(/\/*$/, "/");
  return { botToken, signingSecret, apiUrl, channel: env.SAGABOARD_SLACK_CHANNEL?.trim() || null };
}

/** A Web API client for `config`: one retry, 10 s per call (an interactivity answer has 3 s in all). */
export function slackClient(config: SlackConfig): WebClient {
  return new WebClient(config.botToken, { slackApiUrl: config.apiUrl, retryConfig: { retries: 1, minTimeout: 200, maxTimeout: 1000 }, timeout: 10_000, logLevel: LogLevel.ERROR });
}
