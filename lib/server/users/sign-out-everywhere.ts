import { requireUser } from "@/lib/server/auth/current-user";
import { endAllUserSessions, SessionEndReason } from "@/lib/server/auth/user-sessions";
import { getPrisma } from "@/lib/core/db/prisma";

/** The signed-in person ends every session of theirs, this one included (a lost laptop, a shared machine). */
export async function signOutEverywhere(): Promise<{ sessionsEnded: number }> {
  const user = await requireUser("read");
  return { sessionsEnded: await endAllUserSessions(await getPrisma(), user.id, SessionEndReason.signed_out_everywhere, { type: "user", id: user.email }) };
}
