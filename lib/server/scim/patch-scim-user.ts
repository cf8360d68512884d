import type { PrismaClient } from "@/generated/prisma";
import { writeTransaction } from "@/lib/core/db/transactions";
import type { Actor } from "@/packages/client/src/saga/store";
import type { ProviderState } from "@/lib/server/sso/person-access";
import { applyForProvider, assertProviderMayChange, scimUserOrThrow } from "./scim-people";
import { displayNameOf, parseScim, ScimError, toScimUser, ZScimBoolean, ZScimPatch, type TScimPatchOperation } from "./scim-resources";

/** What one operation says, as a change of the person's state. */
function stateOf(op: TScimPatchOperation): ProviderState {
  const path = op.path?.toLowerCase();
  if (op.op === "remove") throw new ScimError(400, `remove is not supported on users (path ${op.path ?? "none"}); replace active with false to deprovision.`, "mutability");
  const active = (value: unknown): boolean => {
    const parsed = ZScimBoolean.safeParse(value);
    if (!parsed.success) throw new ScimError(400, `active must be true or false, not ${JSON.stringify(value)}.`, "invalidValue");
    return parsed.data;
  };
  const text = (value: unknown, what: string): string => {
    if (typeof value !== "string" || value.trim() === "") throw new ScimError(400, `${what} must be a non-empty string.`, "invalidValue");
    return value.trim().slice(0, 200);
  };
  switch (path) {
    case "active":
      return { active: active(op.value) };
    case "displayname":
    case "name.formatted":
      return { name: text(op.value, op.path ?? "name") };
    case "externalid":
      return { externalId: text(op.value, "externalId") };
    case undefined: {
      // No path: the value is an object of attributes (Okta sends {active: false} so).
      if (op.value === null || typeof op.value !== "object" || Array.isArray(op.value)) throw new ScimError(400, "An operation without a path needs an object value, such as {\"active\": false}.", "invalidSyntax");
      const value = op.value as Record<string, unknown>;
      const name = displayNameOf({ displayName: typeof value.displayName === "string" ? value.displayName : undefined, name: typeof value.name === "object" && value.name !== null ? (value.name as Record<string, string>) : undefined });
      return {
        ...("active" in value ? { active: active(value.active) } : {}),
        ...(name ? { name } : {}),
        ...(typeof value.externalId === "string" ? { externalId: value.externalId } : {}),
      };
    }
    default:
      // The name's parts, emails and the like are accepted and not kept (Sagaboard keeps one display name).
      if (path.startsWith("name.") || path.startsWith("emails") || path === "title" || path.startsWith("urn:")) return {};
      throw new ScimError(400, `Sagaboard does not keep the attribute ${op.path}; patch active, displayName or externalId.`, "invalidPath");
  }
}

/**
 * Patches a user (`PATCH /scim/v2/Users/{id}`): active=false deprovisions (the account is disabled,
 * its sessions end at once, and the change is on the person's audit chain); active=true brings back
 * an account the provider deactivated; the display name and externalId may change too.
 */
export async function patchScimUser(prisma: PrismaClient, input: { id: string; body: unknown; by: Actor; baseUrl: string }): Promise<Record<string, unknown>> {
  const patch = parseScim(ZScimPatch, input.body, "The patch");
  const state = patch.Operations.map(stateOf).reduce<ProviderState>((all, one) => ({ ...all, ...one }), {});
  assertProviderMayChange(await scimUserOrThrow(prisma, input.id));
  await writeTransaction(prisma, (tx, now) => applyForProvider(tx, now, input.id, state, input.by));
  return toScimUser(await scimUserOrThrow(prisma, input.id), await prisma.scimGroup.findMany(), input.baseUrl);
}
