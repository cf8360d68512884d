/**
 * `npm run notifier`: the notifier process. It sends what the outbox holds (signed webhooks, emails
 * through SMTP) and keeps the SLAs (reminders, breaches to the backup team, expiries that reject),
 * over DATABASE_URL's database. Run one or several beside the workers: claims are fenced and SLA
 * marks unique, so two notifiers send each delivery and reject each expired item once.
 *
 * Environment:
 * - SAGABOARD_NOTIFIER_ID (default notifier-<pid>), SAGABOARD_NOTIFIER_POLL_MS (1000);
 * - SAGABOARD_SMTP_URL (`smtp://user:pass@host:587`; unset: no email), SAGABOARD_MAIL_FROM;
 * - SAGABOARD_PUBLIC_URL: the dashboard's address for links (default NEXTAUTH_URL, else http://localhost:PORT).
 * `--once` runs one round and exits.
 */
import { openPrisma } from "@/lib/core/db/prisma";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { publicBaseUrl } from "@/lib/server/notifications/compose-notification";
import { Notifier } from "@/lib/server/notifications/notifier";
import { createLogger, logSink } from "@/lib/core/observability/log";

const notifierId = process.env.SAGABOARD_NOTIFIER_ID?.trim() || `notifier-${process.pid}`;
const logger = createLogger("notifier").child({ notifierId });
const log = logSink(logger);
const rawPoll = process.env.SAGABOARD_NOTIFIER_POLL_MS?.trim();
const pollMs = rawPoll ? Number(rawPoll) : 1_000;
if (!Number.isInteger(pollMs) || pollMs < 10) {
  logger.fatal(`SAGABOARD_NOTIFIER_POLL_MS must be a whole number of at least 10 (got "${rawPoll}").`);
  process.exit(2);
}

const prisma = await openPrisma();
const notifier = new Notifier({ prisma, store: new PrismaSagaStore(prisma), notifierId, pollMs, log });
log(
  `${notifierId}: links point at ${publicBaseUrl()}; email ${process.env.SAGABOARD_SMTP_URL?.trim() ? "through SAGABOARD_SMTP_URL" : "off (SAGABOARD_SMTP_URL is not set)"}.`,
);

if (process.argv.includes("--once")) {
  const round = await notifier.runOnce();
  log(`${notifierId}: ${round.fannedOut} notification(s) fanned out, ${round.attempts.length} delivery attempt(s), ${round.sla?.expired.length ?? 0} expiry(ies).`);
  await prisma.$disconnect();
  process.exit(0);
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    log(`${notifierId}: ${signal}: finishing this round, then stopping.`);
    void notifier.stop().then(async () => {
      await prisma.$disconnect();
      process.exit(0);
    });
  });
}
notifier.start();
log(`${notifierId}: started.`);
