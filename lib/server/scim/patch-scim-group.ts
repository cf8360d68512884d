import type { Prisma, PrismaClient } from "@/generated/prisma";
import { writeTransaction } from "@/lib/core/db/transactions";
import type { Actor } from "@/packages/client/src/saga/store";
import { storedGroups } from "@/lib/server/sso/group-roles";
import { scimGroupOrThrow } from "./get-scim-group";
import { applyForProvider, changeMembership, membersOf } from "./scim-people";
import { parseScim, ScimError, toScimGroup, ZScimPatch, type TScimPatchOperation } from "./scim-resources";

/** The member ids an operation's value names (`[{value: "usr_..."}]`, or one such object). */
function memberIds(value: unknown): string[] {
  const list = Array.isArray(value) ? value : value === undefined || value === null ? [] : [value];
  return list.map((m) => {
    const id = typeof m === "object" && m !== null ? (m as { value?: unknown }).value : undefined;
    if (typeof id !== "string" || id === "") throw new ScimError(400, "Each member is an object with the person's id as value: [{\"value\": \"usr_...\"}].", "invalidValue");
    return id;
  });
}

/** The id in a path such as `members[value eq "usr_1"]`. */
function memberInPath(path: string): string | null {
  return /^members\[value eq "([^"]+)"\]$/i.exec(path)?.[1] ?? null;
}

async function apply(tx: Prisma.TransactionClient, now: Date, groupId: string, op: TScimPatchOperation, by: Actor): Promise<void> {
  const group = await scimGroupOrThrow(tx, groupId);
  const path = op.path ?? "";
  const inPath = memberInPath(path);
  if (path.toLowerCase() === "members" || inPath !== null || (path === "" && op.op !== "replace")) {
    const ids = inPath !== null ? [inPath] : memberIds(path === "" ? (op.value as { members?: unknown } | undefined)?.members : op.value);
    if (op.op === "replace") {
      const current = (await membersOf(tx, group.displayName)).map((m) => m.id);
      await changeMembership(tx, now, group.displayName, current.filter((id) => !ids.includes(id)), false, by);
      await changeMembership(tx, now, group.displayName, ids, true, by);
    } else if (op.op === "remove" && path.toLowerCase() === "members" && ids.length === 0) {
      await changeMembership(tx, now, group.displayName, (await membersOf(tx, group.displayName)).map((m) => m.id), false, by);
    } else {
      await changeMembership(tx, now, group.displayName, ids, op.op === "add", by);
    }
    return;
  }
  const value = path === "" ? (op.value as { displayName?: unknown } | undefined)?.displayName : op.value;
  if ((path === "" || path.toLowerCase() === "displayname") && op.op === "replace" && typeof value === "string" && value.trim() !== "") {
    // A renamed group: each member's list follows, and the role with it (the mapping is by name).
    const name = value.trim();
    for (const member of await membersOf(tx, group.displayName)) {
      await applyForProvider(tx, now, member.id, { groups: storedGroups(member.groups).map((g) => (g === group.displayName ? name : g)) }, by);
    }
    await tx.scimGroup.update({ where: { id: groupId }, data: { displayName: name, updatedAt: now } });
    return;
  }
  throw new ScimError(400, `Sagaboard patches a group's members (add, remove, replace) and its displayName (replace); not ${op.op} ${path || "(no path)"}.`, "invalidPath");
}

/**
 * Patches a group (`PATCH /scim/v2/Groups/{id}`): members added, removed or replaced, or the group
 * renamed. A person who loses the group that gave their role loses it on their next request and
 * their sessions end; each change is on the person's audit chain.
 */
export async function patchScimGroup(prisma: PrismaClient, input: { id: string; body: unknown; by: Actor; baseUrl: string }): Promise<Record<string, unknown>> {
  const patch = parseScim(ZScimPatch, input.body, "The patch");
  await scimGroupOrThrow(prisma, input.id);
  await writeTransaction(prisma, async (tx, now) => {
    await tx.scimGroup.update({ where: { id: input.id }, data: { updatedAt: now } });
    for (const op of patch.Operations) await apply(tx, now, input.id, op, input.by);
  });
  const group = await scimGroupOrThrow(prisma, input.id);
  return toScimGroup(group, await membersOf(prisma, group.displayName), input.baseUrl);
}
