/**
 * The bearer tokens of an identity provider's SCIM client (/scim/v2): made by an admin on the users
 * page (or `npm run user -- scim-token`), the secret shown once and stored as its sha256, revocable.
 * Every SCIM request is checked against them; a refused one is on the SCIM audit chain.
 */
import { createHash, randomBytes } from "node:crypto";
import * as z from "zod";
import type { PrismaClient, ScimToken } from "@/generated/prisma";
import { appendAuditLink } from "@/lib/core/db/audit-chain";
import { isUniqueViolation } from "@/lib/core/db/prisma-errors";
import { writeTransaction } from "@/lib/core/db/transactions";
import { ApiError, validationError, zodIssuesToDetails } from "@/packages/client/src/protocol/errors";
import { ZIsoDate } from "@/packages/client/src/protocol/schemas/saga";
import { randomIds } from "@/packages/client/src/saga/ids";
import type { Actor } from "@/packages/client/src/saga/store";

/** Every SCIM secret starts so, to recognise one in a leak scanner or a log. */
export const SCIM_SECRET_PREFIX = "sgbscim_";
/** The SCIM chain (events that name no account). */
const SCIM_SCOPE = "identity-provider:scim";

/** A SCIM token's name. */
export const ZScimTokenName = z
  .string()
  .trim()
  .min(1, "Name the token after the identity provider that uses it (okta, entra, ...).")
  .max(80, "Use at most 80 characters.")
  .regex(/^[a-z0-9][a-z0-9._-]*$/, "Use lower-case letters, digits, dots, dashes and underscores.");

/** A SCIM token as lists show it (never the secret or its hash). */
export const ZScimTokenView = z.object({
  /** `sct_...` */
  id: z.string(),
  /** Its name. */
  name: z.string(),
  /** The secret's first characters. */
  prefix: z.string(),
  /** Who made it. */
  createdBy: z.string(),
  /** When. */
  createdAt: ZIsoDate,
  /** When it was revoked; null while it works. */
  revokedAt: ZIsoDate.nullable(),
  /** When a request last used it. */
  lastUsedAt: ZIsoDate.nullable(),
});
/** A SCIM token as lists show it. */
export type TScimTokenView = z.infer<typeof ZScimTokenView>;

/** A row as its view. */
export function toScimTokenView(row: ScimToken): TScimTokenView {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    createdBy: row.createdBy,
    createdAt: row.createdAt.toISOString(),
    revokedAt: row.revokedAt?.toISOString() ?? null,
    lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
  };
}

function hashSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

/** A new SCIM token: its view and the secret, shown this once. */
export interface CreatedScimToken {
  token: TScimTokenView;
  secret: string;
}

/** Makes a SCIM token; a taken name is 409 naming `name`. */
export async function createScimToken(prisma: PrismaClient, input: { name: unknown; by: Actor }): Promise<CreatedScimToken> {
  const parsed = ZScimTokenName.safeParse(input.name);
  if (!parsed.success) throw validationError(zodIssuesToDetails(parsed.error, "name"), "The SCIM token");
  const secret = `${SCIM_SECRET_PREFIX}${randomBytes(32).toString("base64url")}`;
  const by = input.by;
  try {
    const row = await writeTransaction(prisma, async (tx, now) => {
      const created = await tx.scimToken.create({
        data: { id: randomIds.next("sct"), name: parsed.data, tokenHash: hashSecret(secret), prefix: secret.slice(0, SCIM_SECRET_PREFIX.length + 4), createdBy: `${by.type}:${by.id}`, createdAt: now },
      });
      await appendAuditLink(tx, now, { scope: SCIM_SCOPE, runId: null, stepId: null, type: "scim.token_created", actor: by, data: { name: created.name, id: created.id } });
      return created;
    });
    return { token: toScimTokenView(row), secret };
  } catch (e) {
    if (isUniqueViolation(e)) throw new ApiError("CONFLICT", `A SCIM token named ${parsed.data} exists; pick another name or revoke that one.`, { details: [{ path: "name", message: "taken" }] });
    throw e;
  }
}

/** Revokes a SCIM token by name: its next request gets 401. Revoking twice changes nothing. */
export async function revokeScimToken(prisma: PrismaClient, input: { name: unknown; by: Actor }): Promise<TScimTokenView> {
  const parsed = ZScimTokenName.safeParse(input.name);
  if (!parsed.success) throw validationError(zodIssuesToDetails(parsed.error, "name"), "The SCIM token");
  return writeTransaction(prisma, async (tx, now) => {
    const { count } = await tx.scimToken.updateMany({ where: { name: parsed.data, revokedAt: null }, data: { revokedAt: now } });
    const row = await tx.scimToken.findUnique({ where: { name: parsed.data } });
    if (!row) throw new ApiError("NOT_FOUND", `No SCIM token is named ${parsed.data}; the users page lists them.`, { details: [{ path: "name", message: "no such token" }] });
    if (count > 0) await appendAuditLink(tx, now, { scope: SCIM_SCOPE, runId: null, stepId: null, type: "scim.token_revoked", actor: input.by, data: { name: row.name, id: row.id } });
    return toScimTokenView(row);
  });
}

/** The live token a bearer secret names, or null (missing, unknown, revoked). Marks its use. */
export async function findScimToken(prisma: PrismaClient, secret: string | null): Promise<ScimToken | null> {
  if (!secret || !secret.startsWith(SCIM_SECRET_PREFIX) || secret.length > 200) return null;
  const row = await prisma.scimToken.findUnique({ where: { tokenHash: hashSecret(secret) } });
  if (!row || row.revokedAt !== null) return null;
  await prisma.scimToken.updateMany({ where: { id: row.id }, data: { lastUsedAt: new Date() } });
  return row;
}
