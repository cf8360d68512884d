import type { PrismaClient } from "@/generated/prisma";
import { writeTransaction } from "@/lib/core/db/transactions";
import type { Actor } from "@/packages/client/src/saga/store";
import { applyForProvider, assertProviderMayChange, scimUserOrThrow } from "./scim-people";

/**
 * Deletes a user as the provider sees it (`DELETE /scim/v2/Users/{id}`): Sagaboard disables the
 * account and ends its sessions, and keeps the row, because the audit log names the person.
 */
export async function deleteScimUser(prisma: PrismaClient, input: { id: string; by: Actor }): Promise<void> {
  assertProviderMayChange(await scimUserOrThrow(prisma, input.id));
  await writeTransaction(prisma, (tx, now) => applyForProvider(tx, now, input.id, { active: false }, input.by));
}
