/**
 * The tool table from the command line (admins edit rows at /admin/tools):
 *
 *   npm run tools -- declare --file manifest.json --namespace acme [--token acme-agent] [--by you@example.com]
 *   npm run tools -- list
 *
 * `declare` reads a team's manifest (see lib/server/tools/declare-tools.ts, ZToolManifest) and puts its tools
 * in the namespace (`acme.create_booking`) as UNREVIEWED: every call is held for a person until an
 * admin accepts the tool. `--token` adds them to that agent token's scope. Works on DATABASE_URL's
 * database (run `npm run db:migrate` first).
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import type { PrismaClient } from "@/lib/core/db/prisma";
import { declareTools } from "@/lib/server/tools/declare-tools";
import { cliUser, required, runCli, UsageError } from "./lib/cli";

const USAGE = `Usage:
  npm run tools -- declare --file manifest.json --namespace TEAM [--token TOKEN_NAME] [--by you@example.com]
  npm run tools -- list`;

function readManifest(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw new UsageError(`Cannot read ${file}: ${(e as Error).message}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new UsageError(`${file} is not JSON: ${(e as Error).message}`);
  }
}

async function run(prisma: PrismaClient, argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { file: { type: "string" }, namespace: { type: "string" }, token: { type: "string" }, by: { type: "string" } },
  });
  const [command, ...rest] = positionals;
  if (rest.length > 0) throw new UsageError(`Unexpected argument "${rest[0]}".`);

  switch (command) {
    case "declare": {
      const manifest = readManifest(required(values.file, "file"));
      let tokenId: string | undefined;
      if (values.token) {
        const token = await prisma.agentToken.findUnique({ where: { name: values.token }, select: { id: true, revokedAt: true } });
        if (!token || token.revokedAt) throw new UsageError(`No active agent token is named "${values.token}" (npm run token -- list).`);
        tokenId = token.id;
      }
      const result = await declareTools(prisma, manifest, { namespace: required(values.namespace, "namespace"), actor: { type: "user", id: values.by ?? cliUser() }, tokenId });
      for (const t of result.tools) {
        const what = t.outcome === "recorded" ? `kept as ${t.status} (an admin reviewed it; your declaration is shown beside it)` : `${t.outcome}, ${t.status}: every call is held until an admin accepts it`;
        console.log(`${t.name}\tv${t.policyVersion}\t${what}`);
      }
      if (result.compensators.length > 0) console.log(`Compensators registered: ${result.compensators.join(", ")}.`);
      console.log("Review them at /admin/tools.");
      return;
    }
    case "list": {
      const rows = await prisma.toolPolicy.findMany({ orderBy: { name: "asc" } });
      if (rows.length === 0) {
        console.log("The tool table is empty. Connectors add their tools at start (npm run db:seed), teams declare theirs: npm run tools -- declare.");
        return;
      }
      for (const r of rows) console.log(`${r.name}\t${r.toolClass}\t${r.status}\tv${r.policyVersion}\towner ${r.owner ?? "-"}\tcompensator ${r.compensator ?? "-"}`);
      return;
    }
    default:
      throw new UsageError(command ? `Unknown command "${command}".` : "Say what to do: declare or list.");
  }
}

await runCli("tools", USAGE, "ToolPolicy", run);
