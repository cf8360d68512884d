/**
 * Dashboard accounts from the command line (admins can also use the browser, /admin/users, which
 * calls the same lib functions):
 *
 *   npm run user -- create --email ana@example.com --name "Ana Admin" --role admin --password '...'
 *   npm run user -- create --email sso@example.com --name "Sam SSO" --role viewer      (SSO-only: no password)
 *   npm run user -- set-role --email ana@example.com --role reviewer
 *   npm run user -- disable --email ana@example.com
 *   npm run user -- enable --email ana@example.com
 *   npm run user -- list
 *   npm run user -- break-glass --email ana@example.com [--off]   (the local admin who signs in while SSO is on)
 *   npm run user -- scim-token --name okta                         (a SCIM bearer token for the identity provider, shown once)
 *
 * Works on DATABASE_URL's database (run `npm run db:migrate` first). Changes take effect on the
 * person's next request. The password may also come from SAGABOARD_PASSWORD, to keep it out of the
 * shell history.
 */
import { parseArgs } from "node:util";
import { ROLES, ZRole, type Role } from "@/lib/server/auth/roles";
import type { PrismaClient } from "@/lib/core/db/prisma";
import { createUser } from "@/lib/server/users/create-user";
import { disableUser, enableUser } from "@/lib/server/users/set-user-enabled";
import { setUserPassword } from "@/lib/server/users/set-user-password";
import { findUsers } from "@/lib/server/users/find-users";
import { setUserRole } from "@/lib/server/users/set-user-role";
import { setBreakGlass } from "@/lib/server/sso/set-break-glass";
import { createScimToken } from "@/lib/server/scim/scim-token";
import type { TUserActor, TUserView } from "@/lib/server/users/user";
import { cliUser, required, runCli, UsageError } from "./lib/cli";

const USAGE = `Usage:
  npm run user -- create --email EMAIL --name NAME --role admin|reviewer|support|viewer [--password PASSWORD]
  npm run user -- set-role --email EMAIL --role admin|reviewer|support|viewer
  npm run user -- disable --email EMAIL
  npm run user -- enable --email EMAIL
  npm run user -- list
  npm run user -- set-password --email EMAIL --password PASSWORD   (ends every session of the account)
  npm run user -- break-glass --email EMAIL [--off]   (the one local admin who signs in with a password while SSO is on)
  npm run user -- scim-token --name NAME   (a SCIM bearer token for the identity provider; printed once)
(--password may be left out for SSO-only accounts, or given as SAGABOARD_PASSWORD.)`;

/** Bad command-line input: printed with the usage, exit code 2. */

function cliActor(): TUserActor {
  return { type: "user", id: cliUser() };
}

function roleFlag(value: string | undefined): Role {
  const parsed = ZRole.safeParse(required(value, "role"));
  if (!parsed.success) throw new UsageError(`--role ${value} is not a role. Use one of: ${ROLES.join(", ")}.`);
  return parsed.data;
}

function describe(user: TUserView): string {
  const state = user.disabledAt ? `disabled ${user.disabledAt.toISOString()}` : "active";
  return `${user.email}\t${user.role}\t${state}\t${user.hasPassword ? "password" : "sso only"}\t${user.name}`;
}

async function run(prisma: PrismaClient, argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { email: { type: "string" }, name: { type: "string" }, role: { type: "string" }, password: { type: "string" }, off: { type: "boolean" } },
  });
  const [command, ...rest] = positionals;
  if (rest.length > 0) throw new UsageError(`Unexpected argument "${rest[0]}".`);
  const by = cliActor();

  switch (command) {
    case "create": {
      const password = values.password ?? process.env.SAGABOARD_PASSWORD;
      const user = await createUser(prisma, {
        email: required(values.email, "email"),
        name: required(values.name, "name"),
        role: roleFlag(values.role),
        password: password === "" ? undefined : password,
        by,
      });
      console.log(`Created ${user.role} ${user.email} (${user.id})${user.hasPassword ? "" : ", SSO only (no password)"}.`);
      return;
    }
    case "set-role": {
      const { user, changed } = await setUserRole(prisma, { email: required(values.email, "email"), role: roleFlag(values.role), by });
      console.log(changed ? `${user.email} is now ${user.role}, from their next request.` : `${user.email} already is ${user.role}.`);
      return;
    }
    case "disable": {
      const { user, changed } = await disableUser(prisma, { email: required(values.email, "email"), by });
      console.log(
        changed
          ? `Disabled ${user.email}: their next request is refused and they cannot sign in.`
          : `${user.email} was already disabled at ${user.disabledAt?.toISOString()}.`,
      );
      return;
    }
    case "set-password": {
      const password = required(values.password ?? process.env.SAGABOARD_PASSWORD, "password");
      const { sessionsEnded } = await setUserPassword(prisma, { email: required(values.email, "email"), password, by });
      console.log(`Set a new password for ${values.email}; ${sessionsEnded} signed-in session(s) ended (they must sign in again).`);
      return;
    }
    case "enable": {
      const { user, changed } = await enableUser(prisma, { email: required(values.email, "email"), by });
      console.log(changed ? `Enabled ${user.email}: they can sign in again, as ${user.role}.` : `${user.email} is already enabled.`);
      return;
    }
    case "break-glass": {
      const breakGlass = values.off !== true;
      const { user, changed } = await setBreakGlass(prisma, { email: required(values.email, "email"), breakGlass, by });
      console.log(
        !changed
          ? `${user.email} already ${breakGlass ? "is" : "is not"} the break-glass account.`
          : breakGlass
            ? `${user.email} is the break-glass account: it signs in with its password while single sign-on is on.`
            : `${user.email} is no longer the break-glass account.`,
      );
      return;
    }
    case "scim-token": {
      const { token, secret } = await createScimToken(prisma, { name: required(values.name, "name"), by });
      console.log(`SCIM token ${token.name} (shown once; Sagaboard keeps only its hash): ${secret}`);
      return;
    }
    case "list": {
      const users: TUserView[] = [];
      let cursor: string | undefined;
      do {
        const page = await findUsers(prisma, { cursor, limit: 500 });
        users.push(...page.items);
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      if (users.length === 0) {
        console.log("No users yet. Create one with: npm run user -- create --email EMAIL --name NAME --role admin --password ...");
        return;
      }
      for (const user of users) console.log(describe(user));
      return;
    }
    default:
      throw new UsageError(command ? `Unknown command "${command}".` : "Say what to do: create, set-role, disable, enable, list, set-password, break-glass or scim-token.");
  }
}

await runCli("user", USAGE, "User", run);
