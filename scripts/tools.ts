/**
 * The tool table from the command line (admins edit rows at /admin/tools):
 *
 *   npm run tools -- declare --file manifest.json --namespace acme [--token acme-agent] [--by you@example.com]
 *   npm run tools -- list
 *   npm run tools -- proposals                          (changes teams propose to their tools, waiting for an admin)
 *   npm run tools -- accept NAME [--reason "..."]        (the row takes the proposal: a new version)
 *   npm run tools -- refuse NAME [--reason "..."]        (the proposal is dropped; the row stays as it is)
 *   npm run tools -- review NAME --class CLASS [--owner TEAM] [--compensator C] [--window 24h] [--reason "..."]
 *   npm run tools -- review --namespace NS --read-only   (every unreviewed tool of NS its server marks read-only, as PURE)
 *   npm run tools -- trust-read-only NS [--off]          (new tools NS's server marks read-only enter reviewed as PURE)
 *   npm run tools -- personal-data NAME --subject ARG [--args a,b] [--result c] [--reason "..."]   (or --none)
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
import { editTool } from "@/lib/server/tools/edit-tool";
import { parseDurationText } from "@/lib/server/tools/duration";
import { hintsSayReadOnly, setTrustedReadOnly } from "@/lib/server/tools/trusted-read-only";
import { cliUser, required, runCli, UsageError } from "./lib/cli";

const USAGE = `Usage:
  npm run tools -- declare --file manifest.json --namespace TEAM [--token TOKEN_NAME] [--by you@example.com]
  npm run tools -- list
  npm run tools -- proposals
  npm run tools -- accept NAME [--reason "..."] [--by you@example.com]
  npm run tools -- refuse NAME [--reason "..."] [--by you@example.com]
  npm run tools -- review NAME --class PURE|REVERSIBLE|COMPENSATABLE|IRREVERSIBLE [--owner TEAM] [--compensator C] [--window 24h] [--reason "..."]
  npm run tools -- review --namespace NS --read-only [--reason "..."]
  npm run tools -- trust-read-only NS [--off]
  npm run tools -- personal-data NAME --subject ARG [--args a,b] [--result c,d] [--reason "..."]   (--none: no personal fields)`;

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
    options: {
      file: { type: "string" },
      namespace: { type: "string" },
      token: { type: "string" },
      by: { type: "string" },
      reason: { type: "string" },
      class: { type: "string" },
      owner: { type: "string" },
      compensator: { type: "string" },
      window: { type: "string" },
      "read-only": { type: "boolean" },
      subject: { type: "string" },
      args: { type: "string" },
      result: { type: "string" },
      none: { type: "boolean" },
      off: { type: "boolean" },
    },
  });
  const [command, ...rest] = positionals;
  const takesName = command === "accept" || command === "refuse" || command === "review" || command === "trust-read-only" || command === "personal-data";
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
    case "review": {
      const actor = { type: "user" as const, id: values.by ?? cliUser() };
      if (values["read-only"]) {
        const namespace = required(values.namespace, "namespace");
        const rows = await prisma.toolPolicy.findMany({ where: { namespace, status: "UNREVIEWED" }, orderBy: { name: "asc" } });
        const readOnly = rows.filter((r) => hintsSayReadOnly((r.declared ?? {}) as { hints?: { readOnly?: boolean; destructive?: boolean } }));
        if (readOnly.length === 0) {
          console.log(`No unreviewed tool of ${namespace} is marked read-only by its server (${rows.length} unreviewed in all); review them one by one.`);
          return;
        }
        for (const r of readOnly) {
          const result = await editTool(prisma, { name: r.name, expectedVersion: r.policyVersion, changes: { status: "REVIEWED", toolClass: "PURE", compensator: null, compensationArgs: null }, reason: values.reason ?? "reviewed as PURE: its server marks it read-only", acceptWithoutArgsSchema: true }, actor);
          console.log(result.ok ? `${r.name}	v${result.tool.policyVersion}	PURE, reviewed` : `${r.name}	not reviewed: ${result.message}`);
        }
        console.log(`${rows.length - readOnly.length} other unreviewed tool(s) of ${namespace} stay held: review them one by one.`);
        return;
      }
      const name = rest[0];
      if (!name) throw new UsageError("Name the tool: npm run tools -- review NAME --class CLASS (or --namespace NS --read-only).");
      const row = await prisma.toolPolicy.findUnique({ where: { name } });
      if (!row) throw new UsageError(`No tool named "${name}" is in the tool table (npm run tools -- list).`);
      const toolClass = values.class?.toUpperCase();
      if (!toolClass) throw new UsageError("Say the class it is reviewed as: --class PURE, REVERSIBLE, COMPENSATABLE or IRREVERSIBLE.");
      let window: number | undefined;
      if (values.window !== undefined) {
        const seconds = parseDurationText(values.window);
        if (seconds === null) throw new UsageError(`--window must be a duration such as 24h, 90m or 7d (got "${values.window}").`);
        window = seconds;
      }
      const changes = {
        status: "REVIEWED" as const,
        toolClass: toolClass as "PURE",
        ...(values.owner !== undefined ? { owner: values.owner } : {}),
        ...(values.compensator !== undefined ? { compensator: values.compensator } : toolClass === "PURE" || toolClass === "IRREVERSIBLE" ? { compensator: null } : {}),
        ...(window !== undefined ? { revocationWindowSec: window } : {}),
      };
      const result = await editTool(prisma, { name, expectedVersion: row.policyVersion, changes, ...(values.reason ? { reason: values.reason } : {}) }, actor);
      if (!result.ok) throw new UsageError(result.message);
      console.log(`${name} is ${result.tool.toolClass}, ${result.tool.status}, version ${result.tool.policyVersion}${result.changed.length > 0 ? ` (${result.changed.join(", ")} changed)` : ""}.`);
      return;
    }
    case "trust-read-only": {
      const namespace = rest[0];
      if (!namespace) throw new UsageError("Name the namespace: npm run tools -- trust-read-only NS [--off].");
      const now = await setTrustedReadOnly(prisma, { namespace, trusted: !values.off, actor: { type: "user", id: values.by ?? cliUser() } });
      console.log(
        values.off
          ? `New tools of ${namespace} are held until an admin reviews them, whatever their server says. Trusted now: ${now.join(", ") || "none"}.`
          : `New tools of ${namespace} that its server marks read-only (and not destructive) enter the table reviewed as PURE; each says so in its history. Existing rows are unchanged. Trusted now: ${now.join(", ")}.`,
      );
      return;
    }
    case "personal-data": {
      const name = rest[0];
      if (!name) throw new UsageError("Name the tool: npm run tools -- personal-data NAME --subject ARG [--args a,b] [--result c].");
      const row = await prisma.toolPolicy.findUnique({ where: { name } });
      if (!row) throw new UsageError(`No tool named "${name}" is in the tool table (npm run tools -- list).`);
      const list = (text: string | undefined) => (text ?? "").split(",").map((f) => f.trim()).filter(Boolean);
      const personalData = values.none ? null : { subject: required(values.subject, "subject"), args: list(values.args), result: list(values.result) };
      const result = await editTool(prisma, { name, expectedVersion: row.policyVersion, changes: { personalData }, ...(values.reason ? { reason: values.reason } : {}) }, { type: "user", id: values.by ?? cliUser() });
      if (!result.ok) throw new UsageError(result.message);
      console.log(personalData ? `${name} v${result.tool.policyVersion}: ${personalData.subject} names the person; sealed: args ${[personalData.subject, ...personalData.args].join(", ")}; result ${personalData.result.join(", ") || "(none)"}.` : `${name} v${result.tool.policyVersion}: no personal fields.`);
      return;
    }
    default:
      throw new UsageError(command ? `Unknown command "${command}".` : "Say what to do: declare, list, proposals, accept, refuse, review, trust-read-only or personal-data.");
  }
}

await runCli("tools", USAGE, "ToolPolicy", run);
