/**
 * SCIM 2.0 (RFC 7643/7644) as identity providers speak it to Sagaboard: the subset they use to
 * provision and deprovision people (Users: create, read, filter by userName, replace, patch
 * active/name, delete; Groups: create, read, filter by displayName, patch members, delete). The
 * resources, their errors and the filter forms live here; each change is its own use case file.
 */
import * as z from "zod";
import type { ScimGroup, User } from "@/generated/prisma";
import { storedGroups } from "@/lib/server/sso/group-roles";

/** SCIM's schema URNs. */
export const ScimSchema = {
  user: "urn:ietf:params:scim:schemas:core:2.0:User",
  group: "urn:ietf:params:scim:schemas:core:2.0:Group",
  list: "urn:ietf:params:scim:api:messages:2.0:ListResponse",
  patch: "urn:ietf:params:scim:api:messages:2.0:PatchOp",
  error: "urn:ietf:params:scim:api:messages:2.0:Error",
} as const;

/** SCIM's error types (RFC 7644 3.12) that Sagaboard answers. */
export type ScimErrorType = "invalidFilter" | "invalidValue" | "invalidSyntax" | "invalidPath" | "uniqueness" | "mutability" | "noTarget";

/** A refusal in SCIM's error shape, with a detail that says what to change. */
export class ScimError extends Error {
  constructor(
    /** HTTP status. */
    readonly status: number,
    message: string,
    /** SCIM's error type, where one applies. */
    readonly scimType?: ScimErrorType,
  ) {
    super(message);
    this.name = "ScimError";
  }

  /** The response body. */
  body(): Record<string, unknown> {
    return { schemas: [ScimSchema.error], status: String(this.status), ...(this.scimType ? { scimType: this.scimType } : {}), detail: this.message };
  }
}

/** The SCIM User resource of an account. */
export function toScimUser(user: User, groups: readonly ScimGroup[], baseUrl: string): Record<string, unknown> {
  const names = storedGroups(user.groups);
  const [givenName, ...rest] = user.name.split(" ");
  return {
    schemas: [ScimSchema.user],
    id: user.id,
    ...(user.externalId ? { externalId: user.externalId } : {}),
    userName: user.email,
    displayName: user.name,
    name: { formatted: user.name, givenName: givenName ?? user.name, familyName: rest.join(" ") },
    emails: [{ value: user.email, type: "work", primary: true }],
    active: user.disabledAt === null || user.disabledReason === "no_mapped_group",
    groups: groups.filter((g) => names.includes(g.displayName)).map((g) => ({ value: g.id, display: g.displayName, $ref: `${baseUrl}/Groups/${g.id}` })),
    meta: { resourceType: "User", created: user.createdAt.toISOString(), lastModified: user.updatedAt.toISOString(), location: `${baseUrl}/Users/${user.id}` },
  };
}

/** The SCIM Group resource of a group and its members. */
export function toScimGroup(group: ScimGroup, members: readonly Pick<User, "id" | "email">[], baseUrl: string): Record<string, unknown> {
  return {
    schemas: [ScimSchema.group],
    id: group.id,
    ...(group.externalId ? { externalId: group.externalId } : {}),
    displayName: group.displayName,
    members: members.map((m) => ({ value: m.id, display: m.email, $ref: `${baseUrl}/Users/${m.id}` })),
    meta: { resourceType: "Group", created: group.createdAt.toISOString(), lastModified: group.updatedAt.toISOString(), location: `${baseUrl}/Groups/${group.id}` },
  };
}

/** A list answer, a page of `resources` of `total`. */
export function scimList(resources: unknown[], total: number, startIndex: number): Record<string, unknown> {
  return { schemas: [ScimSchema.list], totalResults: total, startIndex, itemsPerPage: resources.length, Resources: resources };
}

/** SCIM booleans: providers send true, "true" and "True" (Entra sends strings). */
export const ZScimBoolean = z.union([z.boolean(), z.enum(["true", "false", "True", "False", "TRUE", "FALSE"]).transform((v) => v.toLowerCase() === "true")]);

/** A User as providers send it on create and replace (unknown attributes are ignored, as SCIM asks). */
export const ZScimUserInput = z.object({
  userName: z.string().trim().min(1, "userName is required: the person's email, which they sign in with"),
  externalId: z.string().trim().max(256).optional(),
  displayName: z.string().trim().max(200).optional(),
  name: z.object({ formatted: z.string().optional(), givenName: z.string().optional(), familyName: z.string().optional() }).partial().optional(),
  emails: z.array(z.object({ value: z.string(), primary: ZScimBoolean.optional() }).loose()).optional(),
  active: ZScimBoolean.optional(),
}).loose();
/** A User as providers send it. */
export type TScimUserInput = z.infer<typeof ZScimUserInput>;

/** The display name a User input gives (displayName, else the name's parts, else the email). */
export function displayNameOf(input: { displayName?: string | undefined; name?: { formatted?: string | undefined; givenName?: string | undefined; familyName?: string | undefined } | undefined }): string | undefined {
  const parts = [input.name?.givenName, input.name?.familyName].filter((p): p is string => !!p && p.trim() !== "").join(" ");
  const name = input.displayName?.trim() || input.name?.formatted?.trim() || parts.trim();
  return name ? name.slice(0, 200) : undefined;
}

/** A Group as providers send it on create. */
export const ZScimGroupInput = z.object({
  displayName: z.string().trim().min(1, "displayName is required: the group's name, as the groups claim sends it").max(256),
  externalId: z.string().trim().max(256).optional(),
  members: z.array(z.object({ value: z.string() }).loose()).optional(),
}).loose();

/** One PATCH operation. */
export const ZScimPatchOperation = z.object({
  op: z.string().transform((v) => v.toLowerCase()).pipe(z.enum(["add", "remove", "replace"], { error: "op must be add, remove or replace" })),
  path: z.string().trim().optional(),
  value: z.unknown().optional(),
});
/** One PATCH operation. */
export type TScimPatchOperation = z.infer<typeof ZScimPatchOperation>;

/** A PATCH request. */
export const ZScimPatch = z.object({
  schemas: z.array(z.string()).optional(),
  Operations: z.array(ZScimPatchOperation).min(1, "send at least one operation in Operations"),
});

/** Parses `schema` or throws SCIM's 400 naming each field. */
export function parseScim<T extends z.ZodType>(schema: T, body: unknown, what: string): z.infer<T> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const detail = parsed.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; ");
  throw new ScimError(400, `${what} is not valid: ${detail}.`, "invalidValue");
}

/** The filters Sagaboard answers: `<attribute> eq "<value>"` on the attributes providers match on. */
export function parseEqFilter(filter: string | null, attributes: readonly string[]): { attribute: string; value: string } | null {
  if (filter === null || filter.trim() === "") return null;
  const match = /^\s*([A-Za-z.]+)\s+eq\s+"((?:[^"\\]|\\.)*)"\s*$/i.exec(filter);
  const attribute = match?.[1]?.toLowerCase();
  const known = attributes.find((a) => a.toLowerCase() === attribute);
  if (!match || !known) {
    throw new ScimError(400, `The filter ${JSON.stringify(filter)} is not one Sagaboard answers; use ${attributes.map((a) => `${a} eq "..."`).join(" or ")}.`, "invalidFilter");
  }
  return { attribute: known, value: match[2]!.replace(/\\(.)/g, "$1") };
}

/** The page a list asks for: startIndex from 1, count at most 200. */
export function pageOf(url: URL): { startIndex: number; count: number } {
  const start = Number(url.searchParams.get("startIndex") ?? 1);
  const count = Number(url.searchParams.get("count") ?? 100);
  return { startIndex: Number.isInteger(start) && start >= 1 ? start : 1, count: Number.isInteger(count) && count >= 0 ? Math.min(count, 200) : 100 };
}
