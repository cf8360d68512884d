import type { PrismaClient } from "@/generated/prisma";
import { databaseNow } from "@/lib/core/db/dialect";
import { onConnection } from "@/lib/core/db/transactions";
import { EscalationKind, EscalationStatus, PivotStatus } from "@/packages/client/src/saga/vocabulary";
import { escalationSla, loadSlaRules, pivotSla, slaPoints } from "./sla-rules";

/** The SLA of one waiting item, for its countdown. */
export interface SlaCountdown {
  /** The database clock when read (the countdown ticks from it, not from the browser's clock). */
  now: string;
  /** The rule that applies (`tool:send_email`, `default:pivot`). */
  rule: string;
  createdAt: string;
  reminderAt: string;
  breachAt: string;
  /** When it is rejected if nobody decides; null: it never expires. */
  expireAt: string | null;
  backupTeam: string | null;
}

function planTools(plan: unknown): string[] {
  return Array.isArray(plan) ? plan.map((i: unknown) => (i && typeof i === "object" && "tool" in i && typeof i.tool === "string" ? i.tool : "")).filter(Boolean) : [];
}

/** The countdown of a pending pivot or an open escalation; null once it no longer waits (or does not exist). */
export async function getSlaCountdown(prisma: PrismaClient, itemId: string): Promise<SlaCountdown | null> {
  return onConnection(prisma, async () => {
    const rules = await loadSlaRules(prisma);
    const now = await databaseNow(prisma);
    let rule, points;
    if (itemId.startsWith("piv_")) {
      const pivot = await prisma.pivot.findUnique({ where: { id: itemId }, select: { status: true, plan: true, createdAt: true, deadline: true } });
      if (!pivot || pivot.status !== PivotStatus.PENDING) return null;
      rule = pivotSla(rules, planTools(pivot.plan));
      points = slaPoints(rule, pivot.createdAt, pivot.deadline);
      return view(now, rule.source, pivot.createdAt, points, rule.backupTeam);
    }
    const escalation = await prisma.escalation.findUnique({ where: { id: itemId }, select: { status: true, kind: true, detail: true, createdAt: true, step: { select: { tool: true } } } });
    if (!escalation || escalation.status === EscalationStatus.RESOLVED) return null;
    const detail = escalation.detail as { tool?: unknown } | null;
    rule = escalationSla(rules, escalation.kind as EscalationKind, escalation.step?.tool ?? (typeof detail?.tool === "string" ? detail.tool : null));
    points = slaPoints(rule, escalation.createdAt);
    return view(now, rule.source, escalation.createdAt, points, rule.backupTeam);
  });
}

function view(now: Date, rule: string, createdAt: Date, points: ReturnType<typeof slaPoints>, backupTeam: string | null): SlaCountdown {
  return { now: now.toISOString(), rule, createdAt: createdAt.toISOString(), reminderAt: points.reminderAt.toISOString(), breachAt: points.breachAt.toISOString(), expireAt: points.expireAt?.toISOString() ?? null, backupTeam };
}
