/** What the admin CLIs (token, user) share: usage errors, required flags, who runs them, and exit codes. */
import os from "node:os";
import { Prisma } from "@/generated/prisma";
import { ApiError } from "@/packages/client/src/protocol/errors";
import { openPrisma, type PrismaClient } from "@/lib/core/db/prisma";

/** Wrong words on the command line: printed with the usage, exit code 2. */
export class UsageError extends Error {}

/** The value of a required flag, or a UsageError naming it. */
export function required(value: string | undefined, flag: string): string {
  if (!value) throw new UsageError(`Missing --${flag}.`);
  return value;
}

/** Who is at the keyboard, for audit events (`cli:<os user>`). */
export function cliUser(): string {
  try {
    return `cli:${os.userInfo().username}`;
  } catch {
    return "cli";
  }
}

/**
 * Opens DATABASE_URL, runs the command with the arguments after `--`, and reports failures:
 * usage -> 2; invalid input or conflict (named fields) -> 1; an unmigrated database -> 1.
 */
export async function runCli(
  name: string,
  usage: string,
  table: string,
  run: (prisma: PrismaClient, argv: string[]) => Promise<void>,
): Promise<void> {
  let prisma: PrismaClient | undefined;
  try {
    const argv = process.argv.slice(2);
    prisma = await openPrisma();
    await run(prisma, argv[0] === "--" ? argv.slice(1) : argv);
  } catch (e) {
    if (e instanceof UsageError || (e instanceof TypeError && "code" in e && String(e.code).startsWith("ERR_PARSE_ARGS"))) {
      console.error(`${name}: ${e.message}\n${usage}`);
      process.exitCode = 2;
    } else if (e instanceof ApiError) {
      const fields = e.details.map((d) => `\n  ${d.path}: ${d.message}`).join("");
      console.error(`${name}: ${e.message}${fields}`);
      process.exitCode = 1;
    } else if (e instanceof Prisma.PrismaClientKnownRequestError && e.code === "P2021") {
      console.error(`${name}: the database has no ${table} table yet; run \`npm run db:migrate\` first.`);
      process.exitCode = 1;
    } else {
      console.error(`${name}: failed:`, e);
      process.exitCode = 1;
    }
  } finally {
    await prisma?.$disconnect();
  }
}
