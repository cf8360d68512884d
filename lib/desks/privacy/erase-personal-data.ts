/** An admin erases a person at /admin/personal-data: the desk's use case over `eraseSubject` (the same as `npm run erase`). */
import { getPrisma } from "@/lib/core/db/prisma";
import { userActor, type PersonRequest } from "@/lib/server/auth/current-user";
import { assertCan } from "@/lib/server/auth/roles";
import { eraseSubject, type TEraseSubjectRequest, type TEraseSubjectResult } from "@/lib/server/privacy/erase-subject";

/** The signed-in admin erases a subject (see `eraseSubject`): people-management is theirs alone. */
export async function erasePersonalData({ actor, ...request }: PersonRequest<TEraseSubjectRequest>): Promise<TEraseSubjectResult> {
  assertCan(actor, "users.manage");
  return eraseSubject(await getPrisma(), request, userActor(actor));
}
