/**
 * Roles from the identity provider's groups: the mapping an admin keeps (SsoGroupRole: group ->
 * role) and the one rule that turns a person's groups into a role. The most powerful role of the
 * person's mapped groups wins; a person in no mapped group has no role, and so no access.
 */
import * as z from "zod";
import type { PrismaClient } from "@/generated/prisma";
import type { Db } from "@/lib/core/db/dialect";
import { ROLES, ZRole, type Role } from "@/lib/server/auth/roles";

/** A group name as providers send it (groups claim, SCIM displayName). */
export const ZGroupName = z.string().trim().min(1, "Name the group as the identity provider sends it.").max(256, "Use at most 256 characters.");

/** One row of the mapping. */
export const ZGroupRole = z.object({
  /** The provider's group name (case-sensitive, as sent). */
  group: ZGroupName,
  /** The role its members get. */
  role: ZRole,
});
/** One row of the mapping. */
export type TGroupRole = z.infer<typeof ZGroupRole>;

/** The whole mapping, as an admin saves it: every group once. */
export const ZGroupRoles = z
  .array(ZGroupRole)
  .max(200, "Map at most 200 groups.")
  .superRefine((rows, ctx) => {
    const seen = new Set<string>();
    rows.forEach((row, i) => {
      if (seen.has(row.group)) ctx.addIssue({ code: "custom", path: [i, "group"], message: `the group "${row.group}" is listed twice; keep one row per group` });
      seen.add(row.group);
    });
  });

/** The mapping, group name -> role. */
export type GroupRoleMap = ReadonlyMap<string, Role>;

/** Reads the mapping (a row whose role Sagaboard does not know maps nothing). */
export async function readGroupRoles(db: Db | PrismaClient): Promise<GroupRoleMap> {
  const rows = await db.ssoGroupRole.findMany({ orderBy: { group: "asc" } });
  const map = new Map<string, Role>();
  for (const row of rows) {
    const role = ZRole.safeParse(row.role);
    if (role.success) map.set(row.group, role.data);
  }
  return map;
}

/** The role `groups` give under `mapping`: the most powerful mapped one, or null when none is mapped. */
export function roleOfGroups(groups: readonly string[], mapping: GroupRoleMap): Role | null {
  let best: Role | null = null;
  for (const group of groups) {
    const role = mapping.get(group);
    if (role && (best === null || ROLES.indexOf(role) < ROLES.indexOf(best))) best = role;
  }
  return best;
}

/** Whether `to` grants less than `from` (a move down the role list). */
export function isLowerRole(from: string, to: Role): boolean {
  const before = ROLES.indexOf(from as Role);
  return before === -1 || ROLES.indexOf(to) > before;
}

/** A stored groups column as a list of names (anything else: none). */
export function storedGroups(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((g): g is string => typeof g === "string" && g.length > 0) : [];
}

/**
 * The groups in an identity provider's claim: an array of names, or one name, or a comma-separated
 * string (some providers send that); anything else is no groups.
 */
export function groupsOfClaim(claim: unknown): string[] {
  const names = Array.isArray(claim) ? claim : typeof claim === "string" ? claim.split(",") : [];
  return [...new Set(names.filter((g): g is string => typeof g === "string").map((g) => g.trim()).filter((g) => g.length > 0 && g.length <= 256))].sort();
}
