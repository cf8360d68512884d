/** The erasures recorded on the privacy audit chain, newest first, as /admin/personal-data lists them. */
import { z } from "zod";
import { getPrisma } from "@/lib/core/db/prisma";
import { readOnConnection } from "@/lib/core/db/transactions";
import type { PersonRequest } from "@/lib/server/auth/current-user";
import { assertCan } from "@/lib/server/auth/roles";
import { PRIVACY_SCOPE, SUBJECT_ERASED } from "@/lib/server/privacy/erase-subject";

/** One erasure as people read it: never the subject, only the start of its keyed hash. */
export const ZErasureRow = z.object({
  /** When (the database clock). */
  at: z.date(),
  /** Who asked (an actor label). */
  by: z.string(),
  /** Why. */
  reason: z.string(),
  /** The first 12 hex digits of the subject's keyed hash, to tell two erasures apart. */
  subjectHash: z.string(),
  /** Steps whose fields now read "erased on <date>". */
  steps: z.number(),
  /** Escalations raised because it was erased with open work. */
  escalations: z.number(),
});
/** One erasure. */
export type TErasureRow = z.infer<typeof ZErasureRow>;

/** The latest 100 erasures. */
export async function findErasures({ actor }: PersonRequest): Promise<TErasureRow[]> {
  assertCan(actor, "users.manage");
  const prisma = await getPrisma();
  const rows = await readOnConnection(prisma, (db) => db.auditEvent.findMany({ where: { scope: PRIVACY_SCOPE, type: SUBJECT_ERASED }, orderBy: { seq: "desc" }, take: 100 }));
  return rows.map((r) => {
    const d = (r.data ?? {}) as { reason?: string; subjectHash?: string; steps?: number; escalations?: unknown[] };
    return ZErasureRow.parse({ at: r.at, by: r.actor, reason: d.reason ?? "", subjectHash: (d.subjectHash ?? "").slice(0, 12), steps: d.steps ?? 0, escalations: Array.isArray(d.escalations) ? d.escalations.length : 0 });
  });
}
