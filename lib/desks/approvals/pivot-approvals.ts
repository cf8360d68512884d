/**
 * Two approvers where the tool table says so: a pivot whose plan holds a tool whose row has
 * `twoApprovers` needs two different people's approvals of the same plan hash. The first is recorded
 * (PivotApproval, unique per pivot, plan hash and person) and shown; the second, by someone else,
 * decides through the one decision path; the same person again is refused by the unique key. A plan
 * edited or revised has a new hash, so approvals of the old plan no longer count.
 */
import type { Prisma, PrismaClient } from "@/generated/prisma";
import type { Db } from "@/lib/core/db/dialect";
import type { PivotRecord } from "@/packages/client/src/saga/store";
import type { TApprovalChannel, TPivotApprovals } from "./views";

/** The approvals of `pivot`'s current plan, and how many it needs (the tool table as it is now). */
export async function readPivotApprovals(db: Db | PrismaClient | Prisma.TransactionClient, pivot: Pick<PivotRecord, "id" | "planHash" | "plan">): Promise<TPivotApprovals> {
  const tools = [...new Set(pivot.plan.map((i) => i.tool))];
  const strict = tools.length === 0 ? [] : await db.toolPolicy.findMany({ where: { name: { in: tools }, twoApprovers: true }, select: { name: true }, orderBy: { name: "asc" } });
  const rows = await db.pivotApproval.findMany({ where: { pivotId: pivot.id, planHash: pivot.planHash }, orderBy: { createdAt: "asc" } });
  return {
    needed: strict.length > 0 ? 2 : 1,
    twoApproverTools: strict.map((t) => t.name),
    given: rows.map((r) => ({ by: r.approvedBy, via: r.via as TApprovalChannel, at: r.createdAt.toISOString() })),
  };
}
