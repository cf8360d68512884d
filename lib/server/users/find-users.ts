import * as z from "zod";
import type { PrismaClient } from "@/generated/prisma";
import { validationError, zodIssuesToDetails } from "@/packages/client/src/protocol/errors";
import { toUserView, type TUserView } from "./user";
import { TX_OPTIONS } from "@/lib/core/db/transactions";

/** Which accounts to list. */
export const ZFindUsersInput = z.object({
  /** Include disabled accounts (default true: an admin wants to see them). */
  includeDisabled: z.boolean().default(true),
  /** Page size. */
  limit: z.number().int().min(1).max(500).default(100),
  /** The `nextCursor` of the previous page. */
  cursor: z.string().min(1).optional(),
});
/** Which accounts to list. */
export type TFindUsersInput = z.input<typeof ZFindUsersInput>;

/** One page of accounts, by email. */
export interface UserPage {
  /** The accounts (never their password hashes). */
  items: TUserView[];
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

/** Lists accounts by email, a page at a time. */
export async function findUsers(prisma: PrismaClient, input: TFindUsersInput = {}): Promise<UserPage> {
  const parsed = ZFindUsersInput.safeParse(input);
  if (!parsed.success) throw validationError(zodIssuesToDetails(parsed.error), "The user query");
  const { includeDisabled, limit, cursor } = parsed.data;
  // In a transaction so the read never joins another request's open transaction on this connection.
  const rows = await prisma.$transaction(
    (tx) =>
      tx.user.findMany({
        where: includeDisabled ? {} : { disabledAt: null },
        orderBy: [{ email: "asc" }],
        take: limit + 1,
        ...(cursor ? { cursor: { id: cursor }, skip: 1 } : {}),
      }),
    TX_OPTIONS,
  );
  const page = rows.slice(0, limit);
  return { items: page.map(toUserView), nextCursor: rows.length > limit ? (page.at(-1)?.id ?? null) : null };
}
