import { randomBytes } from "node:crypto";
import type { PrismaClient } from "@/generated/prisma";
import { createUser, type TCreateUserInput } from "./create-user";
import type { TUserView } from "./user";

/** What an admin supplies to create an account whose first password the server makes up. */
export type CreateUserWithInitialPasswordInput = Omit<TCreateUserInput, "password">;

/** The new account and its initial password, which exists only here (the row holds its bcrypt hash). */
export interface CreatedUserWithPassword {
  /** The stored account. */
  user: TUserView;
  /** Show it to the admin once, then forget it. */
  initialPassword: string;
}

/** 18 random bytes as base64url: 24 characters, 144 bits, well inside bcrypt's 72 bytes. */
export function generateInitialPassword(): string {
  return randomBytes(18).toString("base64url");
}

/**
 * Creates an account with a strong random password and returns that password once, for the admin
 * to hand over (the dashboard's "create user": no admin has to invent or type one). Otherwise as
 * `createUser`: the row and its audit event commit together; a taken email is a CONFLICT.
 */
export async function createUserWithInitialPassword(prisma: PrismaClient, input: CreateUserWithInitialPasswordInput): Promise<CreatedUserWithPassword> {
  const initialPassword = generateInitialPassword();
  const user = await createUser(prisma, { ...input, password: initialPassword });
  return { user, initialPassword };
}
