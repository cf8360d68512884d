/**
 * The identity provider's own audit chains: what single sign-on and SCIM refused that names no
 * account (an unknown person, a forged callback, a SCIM request without its token). Refusals that
 * name an account go on that account's chain instead (lib/server/users/user.ts `userScope`).
 */
import type { PrismaClient } from "@/generated/prisma";
import { appendAuditLink } from "@/lib/core/db/audit-chain";
import { writeTransaction } from "@/lib/core/db/transactions";
import type { Actor } from "@/packages/client/src/saga/store";
import type { Json } from "@/packages/client/src/saga/tools";

/** The chain of single sign-on events that name no account. */
export const SSO_SCOPE = "identity-provider:sso";
/** The chain of SCIM events that name no account. */
export const SCIM_SCOPE = "identity-provider:scim";

/** Who refuses at sign-in. */
export const SSO_ACTOR: Actor = { type: "system", id: "sso" };
/** Who acts for the provider's SCIM client (its token's name is in the event). */
export const SCIM_ACTOR: Actor = { type: "system", id: "scim" };

/** Appends one event to `scope`'s chain in its own transaction. */
export async function appendIdentityEvent(prisma: PrismaClient, scope: string, type: string, actor: Actor, data: { [key: string]: Json }): Promise<void> {
  await writeTransaction(prisma, async (tx, now) => {
    await appendAuditLink(tx, now, { scope, runId: null, stepId: null, type, actor, data });
  });
}
