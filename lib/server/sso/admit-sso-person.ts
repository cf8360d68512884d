/**
 * The sign-in decision of single sign-on: who the provider says signed in (a verified email, a name,
 * a subject, the groups claim) becomes a Sagaboard account with the role its groups give, read again
 * at every sign-in, or a refusal that says why. No mapped group, no account: a person the provider
 * knows but no admin mapped is refused (and the refusal audited), never given a default role.
 */
import type { PrismaClient } from "@/generated/prisma";
import { writeTransaction } from "@/lib/core/db/transactions";
import { randomIds } from "@/packages/client/src/saga/ids";
import { appendUserAudit } from "@/lib/server/users/user";
import { readGroupRoles, roleOfGroups } from "./group-roles";
import { applyProviderState, UserSource } from "./person-access";
import { appendIdentityEvent, SSO_ACTOR, SSO_SCOPE } from "./sso-audit";
import { SsoRefusalReason, type TSsoRefusal } from "./sso-refusal";

/** What the provider said about the person signing in. */
export interface SsoProfile {
  /** The email claim (lower-cased here). */
  email: unknown;
  /** The email_verified claim: false refuses; absent is taken as verified (many providers omit it). */
  emailVerified: unknown;
  /** Display name. */
  name: string | null;
  /** The provider's subject (`sub`). */
  subject: string;
  /** The groups claim, already read as names (group-roles.ts `groupsOfClaim`). */
  groups: string[];
}

/** The decision: the account to sign in, or why not. */
export type SsoAdmission = { ok: true; userId: string; role: string } | { ok: false; refusal: TSsoRefusal };

/**
 * Decides a single sign-on: creates the account at its first sign-in, or applies the groups to the
 * existing one (its role follows them, a lost group ends its sessions); refuses an unverified or
 * missing email, a person in no mapped group, a disabled account and the break-glass account's
 * email (that one signs in with its password). Each refusal is an audit event.
 */
export async function admitSsoPerson(prisma: PrismaClient, profile: SsoProfile): Promise<SsoAdmission> {
  const email = typeof profile.email === "string" ? profile.email.trim().toLowerCase() : "";
  const groups = profile.groups;
  const refuse = async (reason: SsoRefusalReason, userId: string | null): Promise<SsoAdmission> => {
    const data = { reason, email, groups, subject: profile.subject };
    if (userId) await writeTransaction(prisma, (tx, now) => appendUserAudit(tx, now, userId, "user.sso_refused", SSO_ACTOR, data));
    else await appendIdentityEvent(prisma, SSO_SCOPE, "sso.refused", SSO_ACTOR, data);
    return { ok: false, refusal: { reason, email: email || null, groups, at: Date.now() } };
  };
  if (!email || profile.emailVerified === false || profile.emailVerified === "false") return refuse(SsoRefusalReason.no_email, null);

  const mapping = await readGroupRoles(prisma);
  const existing = await prisma.user.findUnique({ where: { email }, select: { id: true, breakGlass: true } });
  if (existing?.breakGlass) return refuse(SsoRefusalReason.break_glass, existing.id);
  if (!existing) {
    const role = roleOfGroups(groups, mapping);
    if (role === null) return refuse(SsoRefusalReason.no_mapped_group, null);
    const id = randomIds.next("usr");
    const name = profile.name?.trim() || email;
    try {
      await writeTransaction(prisma, async (tx, now) => {
        await tx.user.create({ data: { id, email, name, role, groups, source: UserSource.sso, externalId: profile.subject, createdAt: now, updatedAt: now } });
        await appendUserAudit(tx, now, id, "user.created", SSO_ACTOR, { email, role, source: UserSource.sso, groups });
      });
      return { ok: true, userId: id, role };
    } catch (e) {
      // Two first sign-ins at once (two tabs): the other one made the account; apply the groups to it.
      if (!(await prisma.user.findUnique({ where: { email } }))) throw e;
    }
  }
  const account = await prisma.user.findUniqueOrThrow({ where: { email }, select: { id: true } });
  const change = await writeTransaction(prisma, (tx, now) =>
    applyProviderState(tx, now, account.id, { groups, ...(profile.name ? { name: profile.name } : {}) }, { by: SSO_ACTOR, mapping, source: UserSource.sso }),
  );
  if (change.disabledReason === "no_mapped_group") return refuse(SsoRefusalReason.no_mapped_group, account.id);
  if (change.disabledReason !== null) return refuse(SsoRefusalReason.disabled, account.id);
  return { ok: true, userId: account.id, role: change.role };
}
