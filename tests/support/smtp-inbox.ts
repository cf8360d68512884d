/**
 * A local SMTP server for the tests (smtp-server on 127.0.0.1 and a free port) that keeps what it
 * receives, parsed (mailparser), and a nodemailer transport pointed at it for the notifier.
 */
import type { AddressInfo } from "node:net";
import { simpleParser } from "mailparser";
import nodemailer from "nodemailer";
import { SMTPServer } from "smtp-server";
import type { Mailer } from "@/lib/server/notifications/deliver-notifications";

/** One received email. */
export interface ReceivedMail {
  to: string[];
  subject: string;
  text: string;
}

/** A running inbox. */
export interface SmtpInbox {
  /** What arrived, oldest first. */
  mails: ReceivedMail[];
  /** A transport that sends to this server. */
  mailer: Mailer;
  /** SAGABOARD_SMTP_URL for a notifier in another process. */
  url: string;
  /** The newest email to `to` whose text holds `containing` (an item's id), waiting up to `timeoutMs` for one. */
  waitFor(to: string, containing?: string, timeoutMs?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

/** Starts the inbox. */
export async function startSmtpInbox(): Promise<SmtpInbox> {
  const mails: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, session, done) {
      simpleParser(stream)
        .then((mail) => {
          mails.push({ to: session.envelope.rcptTo.map((r) => r.address), subject: mail.subject ?? "", text: mail.text ?? "" });
          done();
        })
        .catch(done);
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    mails,
    mailer: nodemailer.createTransport({ host: "127.0.0.1", port, secure: false, ignoreTLS: true }),
    url: `smtp://127.0.0.1:${port}`,
    async waitFor(to, containing = "", timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const mail = mails.filter((m) => m.to.includes(to) && m.text.includes(containing)).at(-1);
        if (mail) return mail;
        if (Date.now() > deadline) throw new Error(`no email to ${to} arrived within ${timeoutMs} ms (got ${mails.length} for others)`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The approval link's secret in an email's text, or null. */
export function approvalSecretIn(text: string): string | null {
  return /\/approve\/([A-Za-z0-9_-]{43})/.exec(text)?.[1] ?? null;
}
