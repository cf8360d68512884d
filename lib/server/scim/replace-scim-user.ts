import type { PrismaClient } from "@/generated/prisma";
import { isUniqueViolation } from "@/lib/core/db/prisma-errors";
import { writeTransaction } from "@/lib/core/db/transactions";
import type { Actor } from "@/packages/client/src/saga/store";
import { ZUserEmail } from "@/lib/server/users/user";
import { applyForProvider, assertProviderMayChange, scimUserOrThrow } from "./scim-people";
import { displayNameOf, parseScim, ScimError, toScimUser, ZScimUserInput } from "./scim-resources";

/**
 * Replaces a user (`PUT /scim/v2/Users/{id}`, how some providers deactivate: active=false): the name,
 * the email and whether the person is active. Deactivating disables the account and ends its sessions.
 */
export async function replaceScimUser(prisma: PrismaClient, input: { id: string; body: unknown; by: Actor; baseUrl: string }): Promise<Record<string, unknown>> {
  const body = parseScim(ZScimUserInput, input.body, "The user");
  const email = ZUserEmail.safeParse(body.userName);
  if (!email.success) throw new ScimError(400, `userName ${JSON.stringify(body.userName)} is not an email address; Sagaboard signs people in by email.`, "invalidValue");
  assertProviderMayChange(await scimUserOrThrow(prisma, input.id));
  try {
    await writeTransaction(prisma, async (tx, now) => {
      await tx.user.update({ where: { id: input.id }, data: { email: email.data, updatedAt: now } });
      await applyForProvider(tx, now, input.id, { active: body.active ?? true, name: displayNameOf(body) ?? email.data, externalId: body.externalId ?? null }, input.by);
    });
  } catch (e) {
    if (isUniqueViolation(e)) throw new ScimError(409, `${email.data} belongs to another account; it cannot be this person's userName too.`, "uniqueness");
    throw e;
  }
  return toScimUser(await scimUserOrThrow(prisma, input.id), await prisma.scimGroup.findMany(), input.baseUrl);
}
