import type { PrismaClient } from "@/generated/prisma";
import { appendAuditLink } from "@/lib/core/db/audit-chain";
import { isUniqueViolation } from "@/lib/core/db/prisma-errors";
import { writeTransaction } from "@/lib/core/db/transactions";
import { randomIds } from "@/packages/client/src/saga/ids";
import type { Actor } from "@/packages/client/src/saga/store";
import { SCIM_SCOPE } from "@/lib/server/sso/sso-audit";
import { changeMembership, membersOf } from "./scim-people";
import { parseScim, ScimError, toScimGroup, ZScimGroupInput } from "./scim-resources";

/**
 * Creates a group (`POST /scim/v2/Groups`) with its first members; a member's role follows at once
 * if an admin mapped the group's name. A name that exists is 409 uniqueness.
 */
export async function createScimGroup(prisma: PrismaClient, input: { body: unknown; by: Actor; baseUrl: string }): Promise<Record<string, unknown>> {
  const body = parseScim(ZScimGroupInput, input.body, "The group");
  const id = randomIds.next("grp");
  try {
    await writeTransaction(prisma, async (tx, now) => {
      await tx.scimGroup.create({ data: { id, displayName: body.displayName, externalId: body.externalId ?? null, createdAt: now, updatedAt: now } });
      await appendAuditLink(tx, now, { scope: SCIM_SCOPE, runId: null, stepId: null, type: "scim.group_created", actor: input.by, data: { id, displayName: body.displayName } });
      await changeMembership(tx, now, body.displayName, (body.members ?? []).map((m) => m.value), true, input.by);
    });
  } catch (e) {
    if (isUniqueViolation(e)) throw new ScimError(409, `A group named ${body.displayName} exists; find it with GET /scim/v2/Groups?filter=displayName eq "${body.displayName}".`, "uniqueness");
    throw e;
  }
  const group = await prisma.scimGroup.findUniqueOrThrow({ where: { id } });
  return toScimGroup(group, await membersOf(prisma, group.displayName), input.baseUrl);
}
