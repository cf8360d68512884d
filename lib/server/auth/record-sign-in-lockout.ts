import type { PrismaClient } from "@/generated/prisma";
import { appendAuditLink } from "@/lib/core/db/audit-chain";
import { userScope } from "@/lib/server/users/user";
import type { SignInLockout } from "./sign-in-throttle";
import { writeTransaction } from "@/lib/core/db/transactions";

/** The audit event a lockout appends to the account's chain. */
export const SIGN_IN_THROTTLED_EVENT = "user.sign_in_throttled";

/** Who blocks an account: the sign-in throttle, not a person. */
const SIGN_IN_ACTOR = { type: "system", id: "sign-in" } as const;

/**
 * Appends `user.sign_in_throttled` to the account's audit chain when `email` names an account; an
 * unknown email records nothing (and the HTTP answer is the same either way). The data holds counts
 * and the block's length, never the email. Returns whether an event was appended.
 */
export async function recordSignInLockout(prisma: PrismaClient, email: string, lockout: SignInLockout): Promise<boolean> {
  const row = await prisma.user.findUnique({ where: { email }, select: { id: true } });
  if (!row) return false;
  await writeTransaction(prisma, async (tx, now) => {
    await appendAuditLink(tx, now, {
      scope: userScope(row.id),
      runId: null,
      stepId: null,
      type: SIGN_IN_THROTTLED_EVENT,
      actor: SIGN_IN_ACTOR,
      data: { failures: lockout.failures, windowSeconds: lockout.windowSeconds, blockSeconds: lockout.blockSeconds, lockout: lockout.lockout },
    });
  });
  return true;
}
