import type { PrismaClient } from "@/generated/prisma";
import { appendAuditLink } from "@/lib/core/db/audit-chain";
import { isUniqueViolation } from "@/lib/core/db/prisma-errors";
import { writeTransaction } from "@/lib/core/db/transactions";
import { randomIds } from "@/packages/client/src/saga/ids";
import { runScope, type PivotRecord } from "@/packages/client/src/saga/store";
import { userActor, type CurrentUser } from "@/lib/server/auth/current-user";
import { readPivotApprovals } from "./pivot-approvals";
import type { TApprovalChannel, TPivotApprovals } from "./views";

/** What an approval of a two-approver plan comes to. */
export type ApprovalCount =
  /** One approval is enough for this plan: decide as usual. */
  | { kind: "single" }
  /** This approval is recorded and another person's is still needed. */
  | { kind: "first"; approvals: TPivotApprovals }
  /** This person already approved this plan: refused, nothing recorded. */
  | { kind: "same_approver"; approvals: TPivotApprovals }
  /** This approval is the second, by another person: decide now. */
  | { kind: "enough"; approvals: TPivotApprovals };

/**
 * Counts `user`'s approval of `pivot`'s current plan when the plan needs two approvers: records it
 * (with its audit event on the run's chain, `pivot.approval_recorded`) and says whether the pivot can
 * now be decided. Two people approving at once both commit their row before reading the count, so
 * the later reader sees both and decides (the decision itself is fenced: one wins).
 */
export async function recordPivotApproval(prisma: PrismaClient, pivot: PivotRecord, user: CurrentUser, via: TApprovalChannel): Promise<ApprovalCount> {
  const before = await readPivotApprovals(prisma, pivot);
  if (before.needed === 1) return { kind: "single" };
  try {
    await writeTransaction(prisma, async (tx, now) => {
      await tx.pivotApproval.create({ data: { id: randomIds.next("pva"), pivotId: pivot.id, planHash: pivot.planHash, userId: user.id, approvedBy: user.email, via, createdAt: now } });
      await appendAuditLink(tx, now, {
        scope: runScope(pivot.runId),
        runId: pivot.runId,
        stepId: null,
        type: "pivot.approval_recorded",
        actor: userActor(user),
        data: { pivotId: pivot.id, planHash: pivot.planHash, via, needed: before.needed, tools: before.twoApproverTools },
      });
    });
  } catch (e) {
    if (!isUniqueViolation(e)) throw e;
    return { kind: "same_approver", approvals: await readPivotApprovals(prisma, pivot) };
  }
  const after = await readPivotApprovals(prisma, pivot);
  const people = new Set(after.given.map((g) => g.by));
  return people.size >= after.needed ? { kind: "enough", approvals: after } : { kind: "first", approvals: after };
}
