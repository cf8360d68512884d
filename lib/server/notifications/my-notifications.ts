/**
 * My notifications: what each person chose to be emailed about (/me/notifications). A person's
 * choice is a row per topic (NotificationPreference); without one, their role's default applies,
 * which is what Sagaboard sent before anyone could choose (lib/server/notifications/fan-out-notifications.ts):
 * reviewers hear of pivots, escalations and deadlines (an escalation goes to its team's addresses
 * when the team has some), support hears of corrections, admins and viewers of nothing.
 *
 * A choice is applied to the recipients fan-out computes: off takes the person's address off the
 * topic's emails (even when a team list names it), on adds it to every email of the topic. Only a
 * topic the person's role may act on can be turned on: a support person cannot ask for pivots they
 * cannot decide. A disabled account gets nothing it opted into.
 */
import type { PrismaClient } from "@/generated/prisma";
import { ApiError } from "@/packages/client/src/protocol/errors";
import { NotificationTopic } from "@/lib/core/outbox/vocabulary";
import { ACTION_PHRASES, can, ZRole, type Action, type Role } from "@/lib/server/auth/roles";

/** A topic a person may be emailed about. */
export interface TopicChoice {
  topic: NotificationTopic;
  /** What the email is about, in the person's words. */
  label: string;
  /** Who gets it when nobody chose, and what "on" adds. */
  detail: string;
  /** What the person must be allowed to do to ask for it. */
  action: Action;
  /** The roles that get it by default. */
  byDefault: readonly Role[];
}

/** The topics people choose from, in the order the page lists them (revokes go to webhooks only). */
export const TOPIC_CHOICES: readonly TopicChoice[] = [
  {
    topic: NotificationTopic.pivot_waiting,
    label: "A run waits at its pivot for approval",
    detail: "Reviewers get it unless they turn it off; an admin may turn it on.",
    action: "pivot.decide",
    byDefault: ["reviewer"],
  },
  {
    topic: NotificationTopic.escalation_raised,
    label: "An escalation is raised",
    detail: "By default it goes to the team the tool table names (its addresses), or to every reviewer when that team has none. On: every escalation, whichever team it is routed to.",
    action: "escalation.resolve",
    byDefault: ["reviewer"],
  },
  {
    topic: NotificationTopic.sla_reminder,
    label: "A pivot or an escalation is near its deadline",
    detail: "Sent at the reminder point of the item's SLA rule, to the same people as the item itself.",
    action: "escalation.resolve",
    byDefault: ["reviewer"],
  },
  {
    topic: NotificationTopic.sla_breached,
    label: "A deadline passed (or a pivot expired and was rejected)",
    detail: "Also sent to the backup team the SLA rule names.",
    action: "escalation.resolve",
    byDefault: ["reviewer"],
  },
  {
    topic: NotificationTopic.correction_waiting,
    label: "A correction message waits to be sent",
    detail: "Support staff get it unless they turn it off; an admin may turn it on.",
    action: "correction.handle",
    byDefault: ["support"],
  },
];

const CHOICE_OF = new Map(TOPIC_CHOICES.map((c) => [c.topic as string, c]));

/** One topic as a person sees it on their page. */
export interface MyTopic {
  topic: NotificationTopic;
  label: string;
  detail: string;
  /** Whether they are emailed about it now. */
  email: boolean;
  /** What their role gets when they have not chosen. */
  roleDefault: boolean;
  /** Whether their role may act on it (only then can it be turned on). */
  allowed: boolean;
  /** Why not, when not allowed ("your role cannot decide pivots"). */
  notAllowedBecause: string | null;
  /** When they last changed it (null: their role's default). */
  changedAt: Date | null;
}

function roleOf(stored: string): Role | null {
  const parsed = ZRole.safeParse(stored);
  return parsed.success ? parsed.data : null;
}

function allowed(role: Role | null, choice: TopicChoice): boolean {
  return role !== null && can(role, choice.action);
}

/** The topics as `user` sees them: what reaches them now, their role's default, and what they may turn on. */
export async function findMyNotifications(prisma: PrismaClient, user: { id: string; role: Role }): Promise<MyTopic[]> {
  const rows = new Map((await prisma.notificationPreference.findMany({ where: { userId: user.id } })).map((r) => [r.topic, r]));
  return TOPIC_CHOICES.map((choice) => {
    const roleDefault = choice.byDefault.includes(user.role);
    const ok = allowed(user.role, choice);
    const row = rows.get(choice.topic);
    return {
      topic: choice.topic,
      label: choice.label,
      detail: choice.detail,
      email: row ? row.email && ok : roleDefault,
      roleDefault,
      allowed: ok,
      notAllowedBecause: ok ? null : `your role (${user.role}) cannot ${ACTION_PHRASES[choice.action]}`,
      changedAt: row?.updatedAt ?? null,
    };
  });
}

/**
 * Saves `user`'s choices (topic -> emailed or not). A topic not named keeps its choice. A choice equal
 * to the role's default removes the row, so a later role change brings that role's default. Refuses,
 * saving nothing: an unknown topic (VALIDATION_FAILED naming it), or turning on a topic the role may
 * not act on (FORBIDDEN saying why).
 */
export async function saveMyNotifications(prisma: PrismaClient, user: { id: string; role: Role }, choices: Record<string, boolean>): Promise<MyTopic[]> {
  const unknown = Object.keys(choices).filter((topic) => !CHOICE_OF.has(topic));
  if (unknown.length > 0) {
    throw new ApiError("VALIDATION_FAILED", `There is no notification topic ${unknown.join(", ")}. Topics: ${TOPIC_CHOICES.map((c) => c.topic).join(", ")}.`, {
      details: unknown.map((topic) => ({ path: `choices.${topic}`, message: "unknown topic" })),
    });
  }
  const refused = Object.entries(choices).filter(([topic, on]) => on && !allowed(user.role, CHOICE_OF.get(topic)!));
  if (refused.length > 0) {
    const [topic] = refused[0]!;
    const choice = CHOICE_OF.get(topic)!;
    throw new ApiError("FORBIDDEN", `"${choice.label}" cannot be turned on: your role (${user.role}) cannot ${ACTION_PHRASES[choice.action]}. Nothing was changed.`);
  }
  const now = new Date();
  await prisma.$transaction(
    Object.entries(choices).map(([topic, email]) =>
      CHOICE_OF.get(topic)!.byDefault.includes(user.role) === email
        ? prisma.notificationPreference.deleteMany({ where: { userId: user.id, topic } })
        : prisma.notificationPreference.upsert({ where: { userId_topic: { userId: user.id, topic } }, create: { userId: user.id, topic, email, updatedAt: now }, update: { email, updatedAt: now } }),
    ),
  );
  return findMyNotifications(prisma, user);
}

/**
 * The people's own choices applied to a topic's recipients (addresses, as fan-out computed them):
 * those who turned it off are taken off, those who turned it on (and whose role may act on it, and
 * whose account works) are added. Topics nobody can choose (revoke_pulled) pass unchanged.
 */
export async function withPeoplesChoices(prisma: PrismaClient, topic: string, recipients: readonly string[]): Promise<string[]> {
  const choice = CHOICE_OF.get(topic);
  if (!choice) return [...recipients];
  const rows = await prisma.notificationPreference.findMany({ where: { topic }, select: { email: true, user: { select: { email: true, role: true, disabledAt: true } } } });
  if (rows.length === 0) return [...recipients];
  const off = new Set(rows.filter((r) => !r.email).map((r) => r.user.email.toLowerCase()));
  const on = rows.filter((r) => r.email && r.user.disabledAt === null && allowed(roleOf(r.user.role), choice)).map((r) => r.user.email);
  return [...new Set([...recipients.filter((address) => !off.has(address.toLowerCase())), ...on])];
}
