/**
 * Agent tokens from the command line (admins can also use the browser, /admin/tokens, which calls
 * the same lib functions):
 *
 *   npm run token -- create --name support-agent --tools charge_card,send_email [--by admin@example.com]
 *   npm run token -- list
 *   npm run token -- revoke --name support-agent [--by admin@example.com]
 *
 * Works on DATABASE_URL's database (run `npm run db:migrate` first). The secret is printed once.
 * Every tool named in --tools must be in the tool table already (`npm run db:seed` adds the support tools).
 */
import { parseArgs } from "node:util";
import type { PrismaClient } from "@/lib/core/db/prisma";
import { createAgentToken } from "@/lib/server/tokens/create-agent-token";
import { findAgentTokens } from "@/lib/server/tokens/find-agent-tokens";
import { revokeAgentToken } from "@/lib/server/tokens/revoke-agent-token";
import { cliUser, required, runCli, UsageError } from "./lib/cli";

const USAGE = `Usage:
  npm run token -- create --name NAME --tools tool_a,tool_b [--role agent|worker] [--by you@example.com]
  npm run token -- create --name TEAM       (a team's token for its namespace TEAM.*, before its tools exist)
  npm run token -- list
  npm run token -- revoke --name NAME [--by you@example.com]`;

/** Bad command-line input: printed with the usage, exit code 2. */

async function run(prisma: PrismaClient, argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { name: { type: "string" }, tools: { type: "string" }, by: { type: "string" }, role: { type: "string" } },
  });
  const [command, ...rest] = positionals;
  if (rest.length > 0) throw new UsageError(`Unexpected argument "${rest[0]}".`);
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
      const { token, secret } = await createAgentToken(prisma, { name: required(values.name, "name"), tools, createdBy: by, role });
      console.log(
        token.tools.length > 0
          ? `Created ${token.role} token "${token.name}" (${token.id}) for tools: ${token.tools.join(", ")}.`
          : `Created ${token.role} token "${token.name}" (${token.id}) for the team's namespace "${token.name}.": it has no tools yet; it declares them (they are held until an admin accepts them).`,
      );
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
        const state = t.revokedAt ? `revoked ${t.revokedAt.toISOString()}` : "active";
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
    default:
      throw new UsageError(command ? `Unknown command "${command}".` : "Say what to do: create, list or revoke.");
  }
}

await runCli("token", USAGE, "AgentToken", run);
