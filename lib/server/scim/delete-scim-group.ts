import type { PrismaClient } from "@/generated/prisma";
import { appendAuditLink } from "@/lib/core/db/audit-chain";
import { writeTransaction } from "@/lib/core/db/transactions";
import type { Actor } from "@/packages/client/src/saga/store";
import { SCIM_SCOPE } from "@/lib/server/sso/sso-audit";
import { scimGroupOrThrow } from "./get-scim-group";
import { changeMembership, membersOf } from "./scim-people";

/** Deletes a group (`DELETE /scim/v2/Groups/{id}`): every member loses it, and the role it gave. */
export async function deleteScimGroup(prisma: PrismaClient, input: { id: string; by: Actor }): Promise<void> {
  const group = await scimGroupOrThrow(prisma, input.id);
  await writeTransaction(prisma, async (tx, now) => {
    await tx.scimGroup.delete({ where: { id: group.id } });
    await changeMembership(tx, now, group.displayName, (await membersOf(tx, group.displayName)).map((m) => m.id), false, input.by);
    await appendAuditLink(tx, now, { scope: SCIM_SCOPE, runId: null, stepId: null, type: "scim.group_deleted", actor: input.by, data: { id: group.id, displayName: group.displayName } });
  });
}
