/** What single sign-on's admin routes answer: plain JSON the users page parses. */
import * as z from "zod";
import { ZGroupRole } from "./group-roles";
import { ZScimTokenView } from "@/lib/server/scim/scim-token";
import type { SavedGroupRoles } from "./save-group-roles";

/** The mapping after a save, and the people it changed. */
export const ZSavedGroupRoles = z.object({
  /** The mapping now. */
  mapping: z.array(ZGroupRole),
  /** People whose role or access changed with it. */
  changed: z.array(z.object({ email: z.string(), role: z.string(), disabledReason: z.string().nullable(), sessionsEnded: z.number().int() })),
});
/** The mapping after a save. */
export type TSavedGroupRoles = z.infer<typeof ZSavedGroupRoles>;

/** A new SCIM token and its secret, shown once. */
export const ZCreatedScimToken = z.object({
  /** The stored token. */
  token: ZScimTokenView,
  /** The secret: give it to the identity provider now; Sagaboard keeps only its hash. */
  secret: z.string(),
});
/** A new SCIM token and its secret. */
export type TCreatedScimToken = z.infer<typeof ZCreatedScimToken>;

/** A save's result as JSON. */
export function toSavedGroupRoles(saved: SavedGroupRoles): TSavedGroupRoles {
  return { mapping: saved.mapping, changed: saved.changed.map((c) => ({ email: c.email, role: c.role, disabledReason: c.disabledReason, sessionsEnded: c.sessionsEnded })) };
}
