import { userActor, type PersonRequest } from "@/lib/server/auth/current-user";
import { assertCan } from "@/lib/server/auth/roles";
import { endAllUserSessions, SessionEndReason } from "@/lib/server/auth/user-sessions";
import { getPrisma } from "@/lib/core/db/prisma";

/** The signed-in person ends every session of theirs, this one included (a lost laptop, a shared machine). */
export async function signOutEverywhere({ actor }: PersonRequest): Promise<{ sessionsEnded: number }> {
  assertCan(actor, "read");
  return { sessionsEnded: await endAllUserSessions(await getPrisma(), actor.id, SessionEndReason.signed_out_everywhere, userActor(actor)) };
}
