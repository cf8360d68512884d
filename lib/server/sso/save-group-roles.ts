import type { PrismaClient } from "@/generated/prisma";
import { appendAuditLink } from "@/lib/core/db/audit-chain";
import { writeTransaction } from "@/lib/core/db/transactions";
import { validationError, zodIssuesToDetails } from "@/packages/client/src/protocol/errors";
import type { Actor } from "@/packages/client/src/saga/store";
import { readGroupRoles, ZGroupRoles, type TGroupRole } from "./group-roles";
import { applyProviderState, type AccessChange } from "./person-access";
import { SSO_SCOPE } from "./sso-audit";

/** What saving the mapping did. */
export interface SavedGroupRoles {
  /** The mapping now, by group. */
  mapping: TGroupRole[];
  /** The people whose role or access changed with it (sessions ended where they lost some). */
  changed: AccessChange[];
}

/**
 * Replaces the group -> role mapping (an admin's edit on the users page) and applies it at once to
 * every person whose role follows their groups: a person whose groups now give a lower role, or none,
 * loses it on their next request and their sessions end; one whose group is newly mapped can sign in.
 * The mapping's change is on the single sign-on audit chain; each person's on their own.
 */
export async function saveGroupRoles(prisma: PrismaClient, input: { mapping: unknown; by: Actor }): Promise<SavedGroupRoles> {
  const parsed = ZGroupRoles.safeParse(input.mapping);
  if (!parsed.success) throw validationError(zodIssuesToDetails(parsed.error, "mapping"), "The group mapping");
  const rows = [...parsed.data].sort((a, b) => a.group.localeCompare(b.group));
  const by = input.by;
  return writeTransaction(prisma, async (tx, now) => {
    await tx.ssoGroupRole.deleteMany({});
    for (const row of rows) await tx.ssoGroupRole.create({ data: { group: row.group, role: row.role, updatedBy: `${by.type}:${by.id}`, updatedAt: now } });
    await appendAuditLink(tx, now, { scope: SSO_SCOPE, runId: null, stepId: null, type: "sso.group_roles_saved", actor: by, data: { mapping: rows.map((r) => `${r.group}=${r.role}`) } });
    const mapping = await readGroupRoles(tx);
    // Read in JavaScript: a JSON column's null is filtered differently by each store.
    const managed = (await tx.user.findMany({ where: { breakGlass: false }, select: { id: true, groups: true, role: true, disabledReason: true } })).filter((u) => u.groups !== null);
    const changed: AccessChange[] = [];
    for (const person of managed) {
      const after = await applyProviderState(tx, now, person.id, {}, { by, mapping });
      if (after.role !== person.role || after.disabledReason !== person.disabledReason) changed.push(after);
    }
    return { mapping: rows, changed };
  });
}
