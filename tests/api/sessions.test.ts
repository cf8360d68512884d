/**
 * Sessions that end, on a real database: a cookie is good only while its UserSession is open. Sign-out
 * ends its own; disabling, a new password and "sign out everywhere" end every one, on the next request.
 */
import { describe, expect, it } from "vitest";
import * as everywhereRoute from "@/app/api/dashboard/me/sign-out-everywhere/route";
import { readSessionState, runWithSessionReader } from "@/lib/server/auth/current-user";
import { endUserSession, startUserSession } from "@/lib/server/auth/user-sessions";
import { createUser } from "@/lib/server/users/create-user";
import { disableUser } from "@/lib/server/users/set-user-enabled";
import { setUserPassword } from "@/lib/server/users/set-user-password";
import { call, useTestDatabase } from "./api-test-kit";

const getPrisma = useTestDatabase("sessions");
const by = { type: "system" as const, id: "test" };
let n = 0;

async function person() {
  const prisma = await getPrisma();
  const user = await createUser(prisma, { email: `s${++n}-${Date.now()}@example.com`, name: "S", role: "reviewer", password: "correct horse battery", by });
  return { prisma, user };
}
const state = (userId: string, sessionId: string) => readSessionState({ readSession: async () => ({ userId, sessionId }), prisma: undefined });

describe("sessions that end", () => {
  it("a signed-out session's cookie is refused on its next request; another browser's session stays", async () => {
    const { prisma, user } = await person();
    const [laptop, phone] = [await startUserSession(prisma, user.id), await startUserSession(prisma, user.id)];
    expect((await state(user.id, laptop)).kind).toBe("signed-in");
    await endUserSession(prisma, laptop);
    expect((await state(user.id, laptop)).kind).toBe("signed-out");
    expect((await state(user.id, phone)).kind).toBe("signed-in");
    // A cookie that names no session (made before sessions could end) or another person's is refused.
    expect((await state(user.id, "none")).kind).toBe("signed-out");
    const other = await person();
    expect((await state(other.user.id, phone)).kind).toBe("signed-out");
  });

  it("disabling the account, a new password, or sign out everywhere end every session", async () => {
    const a = await person();
    const s1 = await startUserSession(a.prisma, a.user.id);
    await setUserPassword(a.prisma, { email: a.user.email, password: "another long password", by });
    expect((await state(a.user.id, s1)).kind).toBe("signed-out");
    expect(await a.prisma.userSession.findUniqueOrThrow({ where: { id: s1 } })).toMatchObject({ endReason: "password_changed" });

    const s2 = await startUserSession(a.prisma, a.user.id);
    await disableUser(a.prisma, { email: a.user.email, by });
    expect((await state(a.user.id, s2)).kind).toBe("disabled");
    expect(await a.prisma.userSession.count({ where: { userId: a.user.id, endedAt: null } })).toBe(0);

    const b = await person();
    const [s3, s4] = [await startUserSession(b.prisma, b.user.id), await startUserSession(b.prisma, b.user.id)];
    const res = await runWithSessionReader(async () => ({ userId: b.user.id, sessionId: s3 }), () => call(everywhereRoute.POST, "/api/dashboard/me/sign-out-everywhere", { method: "POST", headers: { origin: "http://localhost" } }));
    expect(res.json).toEqual({ sessionsEnded: 2 });
    expect([(await state(b.user.id, s3)).kind, (await state(b.user.id, s4)).kind]).toEqual(["signed-out", "signed-out"]);
    const events = await b.prisma.auditEvent.findMany({ where: { scope: `user:${b.user.id}`, type: "user.sessions_ended" } });
    expect(events.map((e) => e.data)).toEqual([{ reason: "signed_out_everywhere", sessions: 2 }]);
  });
});
