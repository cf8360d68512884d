import * as z from "zod";
import type { PrismaClient } from "@/generated/prisma";
import { ZIsoDate } from "@/packages/client/src/protocol/schemas/saga";
import { ZRole } from "@/lib/server/auth/roles";
import { ZScimTokenView, toScimTokenView } from "@/lib/server/scim/scim-token";

/** Single sign-on as the users page shows it to an admin. */
export const ZSsoSettings = z.object({
  /** Whether OIDC single sign-on is configured in this deployment (OIDC_ISSUER, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET). */
  configured: z.boolean(),
  /** The provider's issuer, when configured. */
  issuer: z.string().nullable(),
  /** The claim groups are read from. */
  groupsClaim: z.string(),
  /** The mapping, by group. */
  mapping: z.array(z.object({ group: z.string(), role: ZRole, updatedBy: z.string(), updatedAt: ZIsoDate })),
  /** The break-glass account, if one is marked. */
  breakGlass: z.object({ email: z.string(), name: z.string(), lastSignInAt: ZIsoDate.nullable(), disabled: z.boolean() }).nullable(),
  /** SCIM bearer tokens (never a secret), newest first. */
  scimTokens: z.array(ZScimTokenView),
  /** Where the identity provider's SCIM client points (the SCIM base URL). */
  scimBaseUrl: z.string(),
});
/** Single sign-on as the users page shows it. */
export type TSsoSettings = z.infer<typeof ZSsoSettings>;

/** Reads the mapping, the break-glass account and the SCIM tokens for the users page. */
export async function findSsoSettings(prisma: PrismaClient, env: { configured: boolean; issuer: string | null; groupsClaim: string; baseUrl: string }): Promise<TSsoSettings> {
  const [mapping, breakGlass, tokens] = [
    await prisma.ssoGroupRole.findMany({ orderBy: { group: "asc" } }),
    await prisma.user.findFirst({ where: { breakGlass: true } }),
    await prisma.scimToken.findMany({ orderBy: { createdAt: "desc" }, take: 50 }),
  ];
  return ZSsoSettings.parse({
    configured: env.configured,
    issuer: env.issuer,
    groupsClaim: env.groupsClaim,
    mapping: mapping.filter((m) => ZRole.safeParse(m.role).success).map((m) => ({ group: m.group, role: m.role, updatedBy: m.updatedBy, updatedAt: m.updatedAt.toISOString() })),
    breakGlass: breakGlass ? { email: breakGlass.email, name: breakGlass.name, lastSignInAt: breakGlass.lastSignInAt?.toISOString() ?? null, disabled: breakGlass.disabledAt !== null } : null,
    scimTokens: tokens.map(toScimTokenView),
    scimBaseUrl: `${env.baseUrl}/scim/v2`,
  });
}
