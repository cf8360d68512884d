/**
 * The tool table from the command line (admins edit rows at /admin/tools):
 *
 *   npm run tools -- declare --file manifest.json --namespace acme [--token acme-agent] [--by you@example.com]
 *   npm run tools -- list
 *   npm run tools -- proposals                          (changes teams propose to their tools, waiting for an admin)
 *   npm run tools -- accept NAME [--reason "..."]        (the row takes the proposal: a new version)
 *   npm run tools -- refuse NAME [--reason "..."]        (the proposal is dropped; the row stays as it is)
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
import { settleToolProposal } from "@/lib/server/tools/settle-tool-proposal";
import { toToolProposal } from "@/lib/server/tools/views";
import { cliUser, required, runCli, UsageError } from "./lib/cli";

const USAGE = `Usage:
  npm run tools -- declare --file manifest.json --namespace TEAM [--token TOKEN_NAME] [--by you@example.com]
  npm run tools -- list
  npm run tools -- proposals
  npm run tools -- accept NAME [--reason "..."] [--by you@example.com]
  npm run tools -- refuse NAME [--reason "..."] [--by you@example.com]`;

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
    options: { file: { type: "string" }, namespace: { type: "string" }, token: { type: "string" }, by: { type: "string" }, reason: { type: "string" } },
  });
  const [command, ...rest] = positionals;
  const takesName = command === "accept" || command === "refuse";
  if (rest.length > (takesName ? 1 : 0)) throw new UsageError(`Unexpected argument "${rest.at(-1)}".`);

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
        const proposed = t.proposed && t.proposed.length > 0 ? `; proposes ${t.proposed.join(", ")} (waits for an admin: npm run tools -- proposals)` : "";
        const what = t.outcome === "recorded" ? `kept as ${t.status} (an admin reviewed it; the row stands${proposed || ", and the declaration proposes nothing new"})` : `${t.outcome}, ${t.status}: every call is held until an admin accepts it${proposed}`;
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
    case "proposals": {
      const rows = await prisma.toolPolicy.findMany({ where: { proposedAt: { not: null } }, orderBy: { name: "asc" } });
      if (rows.length === 0) {
        console.log("No proposals wait: every tool's row stands as an admin left it.");
        return;
      }
      for (const row of rows) {
        const view = toToolProposal(row);
        if (!view) continue;
        console.log(`${row.name}	v${row.policyVersion}	${row.status}	proposed by ${view.proposedBy ?? "its team"} at ${view.proposedAt ?? "?"}`);
        for (const c of view.changes) console.log(`  ${c.label}: ${JSON.stringify(c.inForce)} -> ${JSON.stringify(c.proposed)}${c.lowersControl ? "   (lowers a control)" : ""}`);
      }
      console.log("Accept or refuse each: npm run tools -- accept NAME | refuse NAME [--reason \"...\"]");
      return;
    }
    case "accept":
    case "refuse": {
      const name = rest[0];
      if (!name) throw new UsageError(`Name the tool: npm run tools -- ${command} NAME.`);
      const row = await prisma.toolPolicy.findUnique({ where: { name }, select: { policyVersion: true } });
      if (!row) throw new UsageError(`No tool named "${name}" is in the tool table (npm run tools -- list).`);
      const result = await settleToolProposal(prisma, { name, expectedVersion: row.policyVersion, decision: command, ...(values.reason ? { reason: values.reason } : {}) }, { type: "user", id: values.by ?? cliUser() });
      if (!result.ok) throw new UsageError(result.message);
      console.log(command === "accept" ? `Accepted: ${name} is now version ${result.tool.policyVersion}${result.changed.length > 0 ? ` (${result.changed.join(", ")} changed)` : ""}, ${result.tool.status}.` : `Refused: ${name} stays as it was (version ${result.tool.policyVersion}).`);
      return;
    }
    default:
      throw new UsageError(command ? `Unknown command "${command}".` : "Say what to do: declare, list, proposals, accept or refuse.");
  }
}

await runCli("tools", USAGE, "ToolPolicy", run);
