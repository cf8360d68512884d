import type { PrismaClient } from "@/generated/prisma";
import { appendUserAudit, ZUserEmail } from "@/lib/server/users/user";
import { writeTransaction } from "@/lib/core/db/transactions";
import { isUniqueViolation } from "@/lib/core/db/prisma-errors";
import { randomIds } from "@/packages/client/src/saga/ids";
import type { Actor } from "@/packages/client/src/saga/store";
import { UserSource } from "@/lib/server/sso/person-access";
import { applyForProvider } from "./scim-people";
import { displayNameOf, parseScim, ScimError, toScimUser, ZScimUserInput } from "./scim-resources";

/**
 * Provisions a person (`POST /scim/v2/Users`): an account that signs in through single sign-on only.
 * Its role follows its groups, which the provider adds next; until a mapped group arrives it cannot
 * sign in (disabled "no_mapped_group"). An email that already has an account is 409 uniqueness, so
 * the provider looks the person up by userName and manages that account instead.
 */
export async function createScimUser(prisma: PrismaClient, input: { body: unknown; by: Actor; baseUrl: string }): Promise<Record<string, unknown>> {
  const body = parseScim(ZScimUserInput, input.body, "The user");
  const email = ZUserEmail.safeParse(body.emails?.find((e) => e.primary === true)?.value ?? body.userName);
  if (!email.success) throw new ScimError(400, `userName ${JSON.stringify(body.userName)} is not an email address; Sagaboard signs people in by email.`, "invalidValue");
  const id = randomIds.next("usr");
  try {
    await writeTransaction(prisma, async (tx, now) => {
      await tx.user.create({
        data: { id, email: email.data, name: displayNameOf(body) ?? email.data, role: "viewer", groups: [], source: UserSource.scim, externalId: body.externalId ?? null, createdAt: now, updatedAt: now },
      });
      await appendUserAudit(tx, now, id, "user.created", input.by, { email: email.data, source: UserSource.scim });
      await applyForProvider(tx, now, id, { active: body.active ?? true }, input.by);
    });
  } catch (e) {
    if (isUniqueViolation(e)) throw new ScimError(409, `${email.data} already has an account; find it with GET /scim/v2/Users?filter=userName eq "${email.data}" and manage that one.`, "uniqueness");
    throw e;
  }
  return toScimUser(await prisma.user.findUniqueOrThrow({ where: { id } }), await prisma.scimGroup.findMany(), input.baseUrl);
}
