/**
 * What a notification says: one sentence, the item's link, and (for webhooks) the JSON body. Read
 * at send time from the outbox row and the item as it stands, so a retry says what is true now.
 */
import type { NotificationEvent, PrismaClient } from "@/generated/prisma";
import type { Json } from "@/packages/client/src/saga/tools";
import { TOPIC_LABELS, type NotificationTopic } from "@/lib/core/outbox/vocabulary";
import { escalationOwnerOf } from "./fan-out-notifications";

/** The dashboard's address as people reach it (links in emails and webhook bodies). */
export function publicBaseUrl(env: NodeJS.ProcessEnv = process.env): string {
  const url = env.SAGABOARD_PUBLIC_URL?.trim() || env.NEXTAUTH_URL?.trim() || `http://localhost:${env.PORT ?? "3000"}`;
  return url.replace(/\/+$/, "");
}

/** The dashboard path of an item, from its id's prefix. */
export function itemPath(subjectId: string | null, runId: string | null): string {
  if (subjectId?.startsWith("piv_")) return `/pivots/${subjectId}`;
  if (subjectId?.startsWith("esc_")) return `/escalations/${subjectId}`;
  if (subjectId?.startsWith("cor_")) return `/corrections/${subjectId}`;
  if (runId) return `/runs/${runId}`;
  return "/";
}

/** A composed notification. */
export interface ComposedNotification {
  /** The email subject, and the first line of the text. */
  subject: string;
  /** Plain text, link included. */
  text: string;
  /** Straight to the item. */
  link: string;
  /** The run's title, when there is a run. */
  runTitle: string | null;
}

function field(data: Json, name: string): string | null {
  const value = data !== null && typeof data === "object" && !Array.isArray(data) ? data[name] : undefined;
  return typeof value === "string" || typeof value === "number" ? String(value) : null;
}

function duration(sec: number): string {
  if (sec < 120) return `${sec} s`;
  if (sec < 7200) return `${Math.round(sec / 60)} min`;
  return `${Math.round(sec / 360) / 10} h`;
}

/** The sentence and link of `event`, reading the run's title and the item's own title. */
export async function composeNotification(prisma: PrismaClient, event: NotificationEvent, baseUrl: string): Promise<ComposedNotification> {
  const data = event.data as Json;
  const run = event.runId ? await prisma.run.findUnique({ where: { id: event.runId }, select: { title: true } }) : null;
  const escalation = event.subjectId?.startsWith("esc_") ? await prisma.escalation.findUnique({ where: { id: event.subjectId }, select: { title: true, kind: true } }) : null;
  const title = run?.title ?? event.runId ?? "a run";
  const link = `${baseUrl}${itemPath(event.subjectId, event.runId)}`;
  const topic = event.topic as NotificationTopic;
  let subject: string;
  switch (topic) {
    case "pivot_waiting":
      subject = `Pivot waiting for a reviewer: ${title}`;
      break;
    case "escalation_raised":
      subject = `Escalation for ${(event.subjectId ? await escalationOwnerOf(prisma, event.subjectId) : null) ?? "the queue"}: ${escalation?.title ?? field(data, "kind") ?? "an item"} (${title})`;
      break;
    case "sla_reminder":
      subject = `Reminder: ${escalation?.title ?? "a pivot"} has waited ${duration(Number(field(data, "ageSec") ?? 0))} (${title})`;
      break;
    case "sla_breached":
      subject =
        event.eventType === "sla.breached"
          ? `SLA breached, now with ${field(data, "backupTeam") ?? "the backup team"}: ${escalation?.title ?? "a pivot"} (${title})`
          : `Expired and rejected (never approved): ${escalation?.title ?? "a pivot"} (${title})`;
      break;
    case "correction_waiting":
      subject = `Correction waiting for support: ${title}`;
      break;
    case "revoke_pulled":
      subject = `Revoke pulled on ${field(data, "tool") ?? "a whole run"}: ${title}`;
      break;
    default:
      subject = `${TOPIC_LABELS[topic] ?? event.topic}: ${title}`;
  }
  const reason = field(data, "reason");
  const text = [subject, "", reason ? `Reason: ${reason}` : null, `Open it: ${link}`, "", `Sagaboard · ${TOPIC_LABELS[topic] ?? event.topic} · event ${event.eventType}`]
    .filter((l): l is string => l !== null)
    .join("\n");
  return { subject, text, link, runTitle: run?.title ?? null };
}
