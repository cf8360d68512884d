/**
 * Agent tokens from the command line (admins can also use the browser, /admin/tokens, which calls
 * the same lib functions):
 *
 *   npm run token -- create --name support-agent --tools charge_card,send_email [--expires-in 90d|never] [--by admin@example.com]
 *   npm run token -- list
 *   npm run token -- revoke --name support-agent [--by admin@example.com]
 *   npm run token -- default-lifetime 90d|never     (how long new tokens live unless created with --expires-in)
 *
 * Works on DATABASE_URL's database (run `npm run db:migrate` first). The secret is printed once.
 * Every tool named in --tools must be in the tool table already (`npm run db:seed` adds the support tools).
 */
import { parseArgs } from "node:util";
import type { PrismaClient } from "@/lib/core/db/prisma";
import { createAgentToken } from "@/lib/server/tokens/create-agent-token";
import { findAgentTokens } from "@/lib/server/tokens/find-agent-tokens";
import { revokeAgentToken } from "@/lib/server/tokens/revoke-agent-token";
import { getDefaultTokenLifetime, setDefaultTokenLifetime } from "@/lib/server/tokens/token-lifetime";
import { parseDurationText } from "@/lib/server/tools/duration";
import { cliUser, required, runCli, UsageError } from "./lib/cli";

const USAGE = `Usage:
  npm run token -- create --name NAME --tools tool_a,tool_b [--role agent|worker] [--expires-in 90d|12h|never] [--by you@example.com]
  npm run token -- create --name TEAM       (a team's token for its namespace TEAM.*, before its tools exist)
  npm run token -- list
  npm run token -- revoke --name NAME [--by you@example.com]
  npm run token -- default-lifetime 90d|never   (how long new tokens live unless created with --expires-in)`;

/** --expires-in as seconds: a duration (90d, 12h, 2w), or null for "never"; undefined when not given (the default applies). */
function lifetimeOption(text: string | undefined, option: string): number | null | undefined {
  if (text === undefined) return undefined;
  if (text.trim().toLowerCase() === "never") return null;
  const seconds = parseDurationText(text);
  if (seconds === null) throw new UsageError(`${option} must be a duration such as 90d, 12h or 2w, or "never" (got "${text}").`);
  return seconds;
}

/** Bad command-line input: printed with the usage, exit code 2. */

async function run(prisma: PrismaClient, argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { name: { type: "string" }, tools: { type: "string" }, by: { type: "string" }, role: { type: "string" }, "expires-in": { type: "string" } },
  });
  const [command, ...rest] = positionals;
  if (rest.length > (command === "default-lifetime" ? 1 : 0)) throw new UsageError(`Unexpected argument "${rest.at(-1)}".`);
  const by = values.by ?? cliUser();

  switch (command) {
    case "create": {
      // No --tools: a team's token for its namespace (`<name>.`), made before its tools exist; it declares them.
      const tools = (values.tools ?? "")
        .split(",")
        .map((t) => t.trim())
        .filter(Boolean);
      const role = values.role === "worker" ? "worker" : values.role === undefined || values.role === "agent" ? "agent" : null;
      if (!role) throw new UsageError(`--role must be agent or worker (got "${values.role}").`);
      const expiresInSec = lifetimeOption(values["expires-in"], "--expires-in");
      const { token, secret } = await createAgentToken(prisma, { name: required(values.name, "name"), tools, createdBy: by, role, ...(expiresInSec === undefined ? {} : { expiresInSec }) });
      console.log(
        token.tools.length > 0
          ? `Created ${token.role} token "${token.name}" (${token.id}) for tools: ${token.tools.join(", ")}.`
          : `Created ${token.role} token "${token.name}" (${token.id}) for the team's namespace "${token.name}.": it has no tools yet; it declares them (they are held until an admin accepts them).`,
      );
      console.log(token.expiresAt ? `It expires at ${token.expiresAt.toISOString()}.` : "It does not expire (revoke it when its agent is retired).");
      console.log("");
      console.log(`  ${secret}`);
      console.log("");
      console.log("This secret will not be shown again: store it now (the agent sends it as `Authorization: Bearer <secret>`).");
      return;
    }
    case "list": {
      const rows = [];
      let cursor: string | undefined;
      do {
        const page = await findAgentTokens(prisma, { cursor, limit: 500 });
        rows.push(...page.items);
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      if (rows.length === 0) {
        console.log("No agent tokens yet. Create one with: npm run token -- create --name NAME --tools a,b");
        return;
      }
      for (const t of rows) {
        const state = t.revokedAt ? `revoked ${t.revokedAt.toISOString()}` : t.expiresAt && t.expiresAt.getTime() <= Date.now() ? `expired ${t.expiresAt.toISOString()}` : t.expiresAt ? `active, expires ${t.expiresAt.toISOString()}` : "active";
        const used = t.lastUsedAt ? `last used ${t.lastUsedAt.toISOString()}` : "never used";
        console.log(`${t.name}\t${t.prefix}...\t${state}\t${used}\tby ${t.createdBy}\ttools: ${t.tools.join(",")}`);
      }
      return;
    }
    case "revoke": {
      const { token, changed } = await revokeAgentToken(prisma, { name: required(values.name, "name"), revokedBy: by });
      console.log(
        changed
          ? `Revoked agent token "${token.name}": its next request gets 401.`
          : `Agent token "${token.name}" was already revoked at ${token.revokedAt?.toISOString()}.`,
      );
      return;
    }
    case "default-lifetime": {
      const given = rest[0];
      if (given === undefined) {
        const seconds = await getDefaultTokenLifetime(prisma);
        console.log(seconds === null ? "New tokens do not expire unless created with --expires-in." : `New tokens expire after ${seconds} s unless created with --expires-in.`);
        return;
      }
      const seconds = await setDefaultTokenLifetime(prisma, { seconds: lifetimeOption(given, "default-lifetime") ?? null, actor: { type: "user", id: by } });
      console.log(seconds === null ? "New tokens no longer expire by default; existing tokens keep their expiry." : `New tokens now expire after ${seconds} s; existing tokens keep their expiry.`);
      return;
    }
    default:
      throw new UsageError(command ? `Unknown command "${command}".` : "Say what to do: create, list, revoke or default-lifetime.");
  }
}

await runCli("token", USAGE, "AgentToken", run);
