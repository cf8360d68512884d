import type { PrismaClient } from "@/generated/prisma";
import { databaseNow } from "@/lib/core/db/dialect";
import { onConnection } from "@/lib/core/db/transactions";
import { SignInMethod } from "@/lib/server/auth/user-sessions";

/**
 * How old a single sign-on session may be to decide from an email link
 * (SAGABOARD_APPROVAL_SIGNIN_MAX_AGE_SEC, default 3600: an hour); older, the person signs in at the
 * identity provider again first. 0 asks for a fresh sign-in every time. Password sessions are not
 * held to it: without SSO, the session's own lifetime is the bound.
 */
export function approvalSignInMaxAgeSec(env: NodeJS.ProcessEnv = process.env): number {
  const value = Number(env.SAGABOARD_APPROVAL_SIGNIN_MAX_AGE_SEC ?? 3600);
  return Number.isFinite(value) && value >= 0 ? value : 3600;
}

/** Whether the session `sessionId` must sign in again before deciding from an email link. */
export async function needsFreshSignIn(prisma: PrismaClient, sessionId: string | null): Promise<boolean> {
  if (!sessionId) return false;
  return onConnection(prisma, async () => {
    const session = await prisma.userSession.findUnique({ where: { id: sessionId }, select: { createdAt: true, method: true } });
    if (!session || session.method !== SignInMethod.sso) return false;
    const ageSec = ((await databaseNow(prisma)).getTime() - session.createdAt.getTime()) / 1000;
    return ageSec > approvalSignInMaxAgeSec();
  });
}
