/**
 * The SLA sweep, run by every notifier each round: for every pivot and escalation still waiting for
 * people, judged by the database clock, it writes the reminder and the breach once each (an SlaMark
 * row, unique per item and stage, with its audit event `sla.reminder` / `sla.breached` in the same
 * transaction, which writes the notification's outbox row), and at expiry rejects a waiting pivot or
 * a held call through the store's fenced decisions (`decidePivot` on PENDING + plan hash,
 * `resolveEscalation` on not yet resolved), so of two notifiers exactly one rejects it. Expiry never
 * approves.
 */
import { Prisma, type PrismaClient, type SlaRule } from "@/generated/prisma";
import { databaseNow } from "@/lib/core/db/dialect";
import { appendRunAudit, onConnection, writeTransaction } from "@/lib/core/db/transactions";
import type { Actor, SagaStore } from "@/packages/client/src/saga/store";
import type { Json } from "@/packages/client/src/saga/tools";
import { EscalationKind, EscalationStatus, PivotStatus } from "@/packages/client/src/saga/vocabulary";
import { actorAttributes, escalationAttributes, inRunSpan } from "@/lib/core/observability/people-spans";
import { escalationSla, loadSlaRules, pivotSla, slaPoints, type SlaPolicy } from "./sla-rules";
import { isUniqueViolation } from "@/lib/core/db/prisma-errors";

/** The actor of everything the SLA sweep does (`system:sla` in the audit log). */
export const SLA_ACTOR: Actor = { type: "system", id: "sla" };

/** An item the sweep looks at. */
interface WaitingItem {
  id: string;
  runId: string;
  stepId: string | null;
  what: "pivot" | EscalationKind;
  createdAt: Date;
  policy: SlaPolicy;
  points: ReturnType<typeof slaPoints>;
  planHash: string | null;
}

/** What a sweep did. */
export interface SlaSweepReport {
  /** Items looked at. */
  items: number;
  /** Reminders and breaches this sweep wrote (item id and stage). */
  marked: { itemId: string; stage: "reminder" | "breach" }[];
  /** Items this sweep rejected at expiry. */
  expired: string[];
}

/** How a sweep runs. */
export interface SlaSweepOptions {
  /** The saga store the rejections go through. */
  store: SagaStore;
  /** Items per kind per page, oldest first (default 500); a sweep reads every page. */
  batch?: number;
}

function toolOf(detail: Prisma.JsonValue, stepTool: string | null): string | null {
  if (stepTool) return stepTool;
  const tool = detail && typeof detail === "object" && !Array.isArray(detail) ? detail.tool : undefined;
  return typeof tool === "string" ? tool : null;
}

function planTools(plan: Prisma.JsonValue): string[] {
  return Array.isArray(plan) ? plan.map((i) => (i && typeof i === "object" && !Array.isArray(i) && typeof i.tool === "string" ? i.tool : "")).filter(Boolean) : [];
}

/** One page of pivots and escalations waiting for people, oldest first (after `after`), with their SLA. */
type Keyset = { createdAt: Date; id: string };

/** Rows after `k` in (createdAt, id) order. */
function after(k: Keyset | undefined) {
  return k ? { OR: [{ createdAt: { gt: k.createdAt } }, { createdAt: k.createdAt, id: { gt: k.id } }] } : {};
}

const PIVOT_FIELDS = { id: true, runId: true, createdAt: true, plan: true, planHash: true, deadline: true } as const;
const ESCALATION_FIELDS = { id: true, runId: true, stepId: true, kind: true, createdAt: true, detail: true, step: { select: { tool: true } } } as const;
type PivotRow = Prisma.PivotGetPayload<{ select: typeof PIVOT_FIELDS }>;
type EscalationRow = Prisma.EscalationGetPayload<{ select: typeof ESCALATION_FIELDS }>;

function pivotItem(rules: ReadonlyMap<string, SlaRule>, p: PivotRow): WaitingItem {
  const policy = pivotSla(rules, planTools(p.plan));
  return { id: p.id, runId: p.runId, stepId: null, what: "pivot", createdAt: p.createdAt, policy, points: slaPoints(policy, p.createdAt, p.deadline), planHash: p.planHash };
}

function escalationItem(rules: ReadonlyMap<string, SlaRule>, e: EscalationRow): WaitingItem {
  const kind = e.kind as EscalationKind;
  const policy = escalationSla(rules, kind, toolOf(e.detail, e.step?.tool ?? null));
  return { id: e.id, runId: e.runId, stepId: e.stepId, what: kind, createdAt: e.createdAt, policy, points: slaPoints(policy, e.createdAt), planHash: null };
}

async function waitingItems(prisma: PrismaClient, rules: ReadonlyMap<string, SlaRule>, batch: number, from: { pivot?: Keyset; escalation?: Keyset }): Promise<{ items: WaitingItem[]; more: boolean; last: { pivot?: Keyset; escalation?: Keyset } }> {
  const [pivots, escalations] = await onConnection(prisma, async () => [
    await prisma.pivot.findMany({
      where: { status: PivotStatus.PENDING, ...after(from.pivot) },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
      take: batch,
      select: PIVOT_FIELDS,
    }),
    await prisma.escalation.findMany({
      where: { status: { in: [EscalationStatus.OPEN, EscalationStatus.CLAIMED] }, ...after(from.escalation) },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
      take: batch,
      select: ESCALATION_FIELDS,
    }),
  ] as const);
  const items: WaitingItem[] = [...pivots.map((p) => pivotItem(rules, p)), ...escalations.map((e) => escalationItem(rules, e))];
  const keyset = (rows: readonly Keyset[], previous: Keyset | undefined) => (rows.length > 0 ? { createdAt: rows.at(-1)!.createdAt, id: rows.at(-1)!.id } : previous);
  const last = { pivot: keyset(pivots, from.pivot), escalation: keyset(escalations, from.escalation) };
  return { items, more: pivots.length === batch || escalations.length === batch, last };
}

/** Writes the item's mark for `stage` with its audit event; false when another notifier wrote it first. */
async function mark(prisma: PrismaClient, item: WaitingItem, stage: "reminder" | "breach", dueAt: Date): Promise<boolean> {
  try {
    await writeTransaction(prisma, async (tx, now) => {
      await tx.slaMark.create({ data: { id: `${item.id}:${stage}`, itemId: item.id, stage, at: now, dueAt } });
      const data: Json = {
        itemId: item.id,
        item: item.what,
        stage,
        rule: item.policy.source,
        slaSec: item.policy.slaSec,
        ageSec: Math.round((now.getTime() - item.createdAt.getTime()) / 1000),
        backupTeam: item.policy.backupTeam,
        dueAt: dueAt.toISOString(),
        expiresAt: item.points.expireAt?.toISOString() ?? null,
      };
      await appendRunAudit(tx, now, item.runId, item.stepId, { type: stage === "reminder" ? "sla.reminder" : "sla.breached", actor: SLA_ACTOR, data });
    });
    return true;
  } catch (e) {
    if (isUniqueViolation(e)) return false;
    throw e;
  }
}

function hours(sec: number): string {
  return sec >= 7200 ? `${Math.round(sec / 360) / 10} hours` : sec >= 120 ? `${Math.round(sec / 60)} minutes` : `${sec} seconds`;
}

/**
 * Rejects an expired item (its span: `decide_pivot` or `resolve_escalation` by the `sla` actor, in the
 * run's trace when tracing is on); false when it was decided (or moved) meanwhile.
 */
async function expire(prisma: PrismaClient, store: SagaStore, item: WaitingItem, now: Date): Promise<boolean> {
  const pivot = item.what === "pivot";
  const attributes = pivot
    ? { "sagaboard.pivot.id": item.id, "sagaboard.pivot.decision": "reject", "sagaboard.pivot.reason_code": "expired" }
    : { ...escalationAttributes({ id: item.id, runId: item.runId, stepId: item.stepId, kind: item.what }), "sagaboard.escalation.decision": "rejected" };
  return inRunSpan(prisma, pivot ? "decide_pivot" : "resolve_escalation", item.runId, { ...attributes, ...actorAttributes("system", SLA_ACTOR.id) }, () => expireItem(store, item, now), (expired) => ({
    [pivot ? "sagaboard.pivot.result" : "sagaboard.escalation.result"]: expired ? (pivot ? "decided" : "resolved") : "already_decided",
  }));
}

/** Rejects an expired item through the store's fenced decision; false when it was decided (or moved) meanwhile. */
async function expireItem(store: SagaStore, item: WaitingItem, now: Date): Promise<boolean> {
  const waited = hours(Math.round((now.getTime() - item.createdAt.getTime()) / 1000));
  if (item.what === "pivot") {
    const reason = `Expired: no reviewer decided within ${waited} (SLA rule ${item.policy.source}); an expired pivot is rejected, never approved. Revise the plan and request the pivot again, or unwind the run.`;
    const decided = await store.decidePivot(
      item.id,
      { status: PivotStatus.REJECTED, decidedBy: SLA_ACTOR.id, reason, expectedPlanHash: item.planHash ?? "" },
      { type: "pivot.rejected", actor: SLA_ACTOR, data: { pivotId: item.id, planHash: item.planHash, reason, expired: true, rule: item.policy.source } },
    );
    return decided !== null;
  }
  const note = `Expired: no reviewer decided within ${waited} (SLA rule ${item.policy.source}); an expired held call is rejected, never approved. Ask for a pivot that covers it, or leave it out.`;
  const resolution = { approved: false, expired: true, note };
  const resolved = await store.resolveEscalation(item.id, { resolvedBy: SLA_ACTOR.id, resolution }, { type: "escalation.resolved", actor: SLA_ACTOR, data: { escalationId: item.id, kind: item.what, resolution } });
  return resolved !== null;
}

/**
 * Rejects one pending pivot or held call now if its SLA has expired by the database clock, as the
 * sweep would on its next round: a person approving between the expiry and that round is answered
 * "already decided" instead of approving what expiry must reject. True when this call rejected it.
 */
export async function expireIfDue(prisma: PrismaClient, store: SagaStore, itemId: string): Promise<boolean> {
  const item = await onConnection(prisma, async () => {
    const rules = await loadSlaRules(prisma);
    if (itemId.startsWith("piv_")) {
      const pivot = await prisma.pivot.findFirst({ where: { id: itemId, status: PivotStatus.PENDING }, select: PIVOT_FIELDS });
      return pivot ? pivotItem(rules, pivot) : null;
    }
    const escalation = await prisma.escalation.findFirst({ where: { id: itemId, status: { in: [EscalationStatus.OPEN, EscalationStatus.CLAIMED] } }, select: ESCALATION_FIELDS });
    return escalation ? escalationItem(rules, escalation) : null;
  });
  if (!item?.points.expireAt) return false;
  const now = await onConnection(prisma, () => databaseNow(prisma));
  return now >= item.points.expireAt && (await expire(prisma, store, item, now));
}

/** One sweep over everything waiting for people, a page at a time (so old items never starve newer ones). */
export async function sweepSlas(prisma: PrismaClient, options: SlaSweepOptions): Promise<SlaSweepReport> {
  const rules = await onConnection(prisma, () => loadSlaRules(prisma));
  const report: SlaSweepReport = { items: 0, marked: [], expired: [] };
  let from: { pivot?: Keyset; escalation?: Keyset } = {};
  for (;;) {
    const page = await waitingItems(prisma, rules, options.batch ?? 500, from);
    const marks = new Set((await onConnection(prisma, () => prisma.slaMark.findMany({ where: { itemId: { in: page.items.map((i) => i.id) } }, select: { id: true } }))).map((m) => m.id));
    const now = await onConnection(prisma, () => databaseNow(prisma));
    report.items += page.items.length;
    for (const item of page.items) {
      if (item.points.expireAt && now >= item.points.expireAt) {
        if (await expire(prisma, options.store, item, now)) report.expired.push(item.id);
        continue;
      }
      for (const [stage, dueAt] of [["reminder", item.points.reminderAt], ["breach", item.points.breachAt]] as const) {
        if (now >= dueAt && !marks.has(`${item.id}:${stage}`) && (await mark(prisma, item, stage, dueAt))) report.marked.push({ itemId: item.id, stage });
      }
    }
    if (!page.more) return report;
    from = page.last;
  }
}
