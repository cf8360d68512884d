/**
 * The notifier: the worker-side loop that sends what the outbox holds and keeps the SLAs. Each round
 * sweeps the SLAs (reminders, breaches, expiries: lib/server/sla), fans new outbox rows out into deliveries,
 * and sends the deliveries that are due. It runs in its own process (`npm run notifier`) beside the
 * workers, never in a request: a decision only writes its outbox row, so a slow or failing receiver
 * can neither block nor fail it. Several notifiers may run at once (claims are fenced, marks unique).
 */
import nodemailer from "nodemailer";
import type { PrismaClient } from "@/generated/prisma";
import { onConnection } from "@/lib/core/db/transactions";
import type { SagaStore } from "@/packages/client/src/saga/store";
import { sweepSlas, type SlaSweepReport } from "@/lib/server/sla/sweep-slas";
import { publicBaseUrl } from "./compose-notification";
import { deliverNotifications, type DeliverOptions, type DeliveryAttempt, type Mailer } from "./deliver-notifications";
import { fanOutNotifications } from "./fan-out-notifications";
import { slackConfig, type SlackConfig } from "@/lib/server/slack/slack-config";
import type { LogSink } from "@/lib/core/observability/log";

/** How a notifier is set up. */
export interface NotifierOptions extends Partial<Omit<DeliverOptions, "notifierId" | "mailer" | "slack">> {
  /** Slack's settings (default: from SAGABOARD_SLACK_*; null: no Slack). */
  slack?: SlackConfig | null;
  /** Its database (its own client, or the store's: every query here queues behind the store's transactions). */
  prisma: PrismaClient;
  /** The saga store SLA expiries reject through (over the same client). */
  store: SagaStore;
  /** Recorded as the holder of claimed deliveries. */
  notifierId: string;
  /** The SMTP transport (default: from SAGABOARD_SMTP_URL; null: no email). */
  mailer?: Mailer | null;
  /** Pause between rounds that found nothing to send (default 1 s). */
  pollMs?: number;
  /** Whether the SLA sweep runs (default true). */
  slas?: boolean;
  /** Where it says what it does (default: silent). */
  log?: LogSink;
}

/** What one round did. */
export interface NotifierRound {
  sla: SlaSweepReport | null;
  fannedOut: number;
  attempts: DeliveryAttempt[];
}

/** The SMTP transport SAGABOARD_SMTP_URL names (`smtp://user:pass@host:587`, `smtps://...`), or null. */
export function mailerFromEnv(env: NodeJS.ProcessEnv = process.env): Mailer | null {
  const url = env.SAGABOARD_SMTP_URL?.trim();
  return url ? nodemailer.createTransport(url) : null;
}

/** Sends notifications and keeps SLAs; `runOnce` for one round, `start`/`stop` for the loop. */
export class Notifier {
  private readonly options: NotifierOptions;
  private readonly mailer: Mailer | null;
  private readonly slack: SlackConfig | null;
  private loop: Promise<void> | null = null;
  private stopping = false;
  private wake: (() => void) | null = null;

  constructor(options: NotifierOptions) {
    if (!options.notifierId.trim()) throw new Error("A notifier needs a non-empty notifierId.");
    this.options = options;
    this.mailer = options.mailer === undefined ? mailerFromEnv() : options.mailer;
    this.slack = options.slack === undefined ? slackConfig() : options.slack;
  }

  /** One round: SLAs, fan-out, delivery. */
  async runOnce(): Promise<NotifierRound> {
    const { prisma, store } = this.options;
    const sla = this.options.slas === false ? null : await sweepSlas(prisma, { store });
    // Fan-out only reads and writes rows (no network), so it runs in one turn of the client's queue.
    const fannedOut = await onConnection(prisma, () => fanOutNotifications(prisma, { email: this.mailer !== null, slack: this.slack ? { channel: this.slack.channel } : false }));
    const attempts = await deliverNotifications(prisma, {
      ...this.options,
      notifierId: this.options.notifierId,
      mailer: this.mailer,
      slack: this.slack,
      baseUrl: this.options.baseUrl ?? publicBaseUrl(),
      from: this.options.from ?? process.env.SAGABOARD_MAIL_FROM?.trim() ?? "Sagaboard <sagaboard@localhost>",
    });
    const log = this.options.log;
    if (log) {
      for (const s of sla?.expired ?? []) log(`${this.options.notifierId}: ${s} expired and was rejected (an expired item is never approved)`, { itemId: s, sla: "expired" });
      for (const m of sla?.marked ?? []) log(`${this.options.notifierId}: ${m.itemId} reached its SLA ${m.stage}`, { itemId: m.itemId, sla: m.stage });
      for (const a of attempts) {
        const fields = { deliveryId: a.deliveryId, channel: a.channel, delivered: a.ok, recorded: a.recorded, level: a.ok ? ("info" as const) : ("warn" as const) };
        log(`${this.options.notifierId}: ${a.channel} delivery ${a.deliveryId} to ${a.target}: ${a.ok ? "delivered" : `failed (${a.error ?? "unknown"})`}${a.recorded ? "" : " (taken over meanwhile; not recorded)"}`, fields);
      }
    }
    return { sla, fannedOut, attempts };
  }

  /** Starts the loop until `stop()`; a failed round is logged and retried after the pause. */
  start(): void {
    if (this.loop) return;
    this.stopping = false;
    this.loop = (async () => {
      while (!this.stopping) {
        let busy = false;
        try {
          const round = await this.runOnce();
          busy = round.attempts.length > 0 || round.fannedOut > 0;
        } catch (e) {
          this.options.log?.(`${this.options.notifierId}: a round failed (${e instanceof Error ? e.message : String(e)}); trying again`, { level: "warn" });
        }
        if (!busy && !this.stopping) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, this.options.pollMs ?? 1_000);
            this.wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
        }
      }
    })().finally(() => {
      this.loop = null;
    });
  }

  /** Stops the loop after the current round. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.loop;
  }
}
