/**
 * One demo account per role, so `npm start` can be tried without creating accounts. DEMO ONLY: the
 * password is public (it is printed by `npm start` and written here). On a shared or real
 * deployment disable them (`npm run user -- disable --email admin@sagaboard.local`, ...) after
 * creating real accounts, or set SAGABOARD_DEMO_USERS=off before the first start.
 */
import type { PrismaClient } from "@/generated/prisma";
import { ApiError } from "@/packages/client/src/protocol/errors";
import { Role } from "@/lib/server/auth/roles";
import { createUser } from "./create-user";

/** The demo accounts' shared password (public; demo only). */
export const DEMO_PASSWORD = "sagaboard-demo";

/** The demo accounts, one per role. */
export const DEMO_USERS = [
  { email: "admin@sagaboard.local", name: "Ada Admin", role: Role.ADMIN },
  { email: "reviewer@sagaboard.local", name: "Rita Reviewer", role: Role.REVIEWER },
  { email: "support@sagaboard.local", name: "Sam Support", role: Role.SUPPORT },
  { email: "viewer@sagaboard.local", name: "Vic Viewer", role: Role.VIEWER },
] as const;

/** What `ensureDemoUsers` did for one demo account. */
export interface DemoUserOutcome {
  /** The demo account's email. */
  email: string;
  /** Its role as created (an admin may have changed it since). */
  role: Role;
  /** True when this call created it; false when it already existed (it is left as it is). */
  created: boolean;
}

/**
 * Creates each demo account that does not exist yet. Existing ones are left alone, so a demo account
 * an admin disabled or changed stays that way.
 */
export async function ensureDemoUsers(prisma: PrismaClient): Promise<DemoUserOutcome[]> {
  const outcomes: DemoUserOutcome[] = [];
  for (const demo of DEMO_USERS) {
    const existing = await prisma.user.findUnique({ where: { email: demo.email }, select: { id: true } });
    if (existing) {
      outcomes.push({ email: demo.email, role: demo.role, created: false });
      continue;
    }
    try {
      await createUser(prisma, { ...demo, password: DEMO_PASSWORD, by: { type: "system", id: "demo-seed" } });
      outcomes.push({ email: demo.email, role: demo.role, created: true });
    } catch (e) {
      // Another process (a second `npm start`) created it between the read and the write.
      if (e instanceof ApiError && e.code === "CONFLICT") outcomes.push({ email: demo.email, role: demo.role, created: false });
      else throw e;
    }
  }
  return outcomes;
}
