/**
 * Retention and archives from the command line (lib/server/retention/ARCHITECTURE.md):
 *
 *   npm run retention -- --dry-run                 (what a pass would archive; changes nothing)
 *   npm run retention [-- --max-runs N]            (archive settled runs past their retention, verify the file, remove them)
 *   npm run retention -- show                      (the default and every tool's own retention)
 *   npm run retention -- default 400d|forever      (the default, for tools without their own)
 *   npm run retention -- tool NAME 90d|default     (a tool's own retention, a new version of its row)
 *   npm run retention -- public-key                (the archive signing key's public half, PEM, for archive:verify --public-key)
 *
 * The app server runs the same pass daily (SAGABOARD_RETENTION_MS); `npm run archive:verify -- FILE`
 * checks an archive offline.
 */
import { parseArgs } from "node:util";
import type { PrismaClient } from "@/lib/core/db/prisma";
import { resolveArchiveSigningKey } from "@/lib/core/archive/signing-key";
import { archiveDirectory, archiveSettledRuns } from "@/lib/server/retention/archive-settled-runs";
import { readRetentionPolicy, setDefaultRetention } from "@/lib/server/retention/retention-policy";
import { parseDurationText } from "@/lib/server/tools/duration";
import { editTool } from "@/lib/server/tools/edit-tool";
import { cliUser, runCli, UsageError } from "./lib/cli";

const USAGE = `Usage:
  npm run retention -- --dry-run [--max-runs N]
  npm run retention [-- --max-runs N]
  npm run retention -- show
  npm run retention -- default 400d|forever
  npm run retention -- tool NAME 90d|default [--reason "..."]
  npm run retention -- public-key`;

function days(seconds: number | null): string {
  return seconds === null ? "kept for ever" : seconds % 86_400 === 0 ? `${seconds / 86_400}d` : `${seconds}s`;
}

function duration(text: string | undefined, keep: string): number | null {
  if (text === undefined) throw new UsageError(`Say how long: a duration such as 90d, 12w or 400d, or "${keep}".`);
  if (text === keep) return null;
  const seconds = parseDurationText(text);
  if (seconds === null) throw new UsageError(`"${text}" is not a duration: write a number and a unit (90d, 12w, 36h), or "${keep}".`);
  return seconds;
}

async function run(prisma: PrismaClient, argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({ args: argv, allowPositionals: true, options: { "dry-run": { type: "boolean" }, "max-runs": { type: "string" }, reason: { type: "string" }, by: { type: "string" } } });
  const by = { type: "user" as const, id: values.by ?? cliUser() };
  const [command, ...rest] = positionals;
  switch (command) {
    case undefined: {
      const maxRuns = values["max-runs"] === undefined ? undefined : Number(values["max-runs"]);
      if (maxRuns !== undefined && (!Number.isInteger(maxRuns) || maxRuns < 1)) throw new UsageError(`--max-runs takes a whole number of at least 1 (got "${values["max-runs"]}").`);
      const result = await archiveSettledRuns(prisma, { dryRun: values["dry-run"] ?? false, ...(maxRuns ? { maxRuns } : {}) }, by);
      console.log(`${result.message} (${result.seconds} s)`);
      return;
    }
    case "show": {
      const policy = await readRetentionPolicy(prisma);
      console.log(`Default: ${days(policy.defaultSec)}. Archives go to ${archiveDirectory()}.`);
      for (const [tool, sec] of [...policy.toolSec.entries()].sort()) console.log(`  ${tool}: ${days(sec)}`);
      if (policy.toolSec.size === 0) console.log("  (no tool has its own retention)");
      return;
    }
    case "default": {
      if (rest.length !== 1) throw new UsageError("Say how long: npm run retention -- default 400d (or forever).");
      const seconds = await setDefaultRetention(prisma, { seconds: duration(rest[0], "forever"), actor: by });
      console.log(`Default retention: ${days(seconds)}.`);
      return;
    }
    case "tool": {
      const [name, text] = rest;
      if (!name || rest.length !== 2) throw new UsageError("Name the tool and how long: npm run retention -- tool NAME 90d (or default).");
      const row = await prisma.toolPolicy.findUnique({ where: { name } });
      if (!row) throw new UsageError(`No tool named "${name}" is in the tool table (npm run tools -- list).`);
      const retentionSec = duration(text, "default");
      const result = await editTool(prisma, { name, expectedVersion: row.policyVersion, changes: { retentionSec }, ...(values.reason ? { reason: values.reason } : {}) }, by);
      if (!result.ok) throw new UsageError(result.message);
      console.log(`${name} v${result.tool.policyVersion}: retention ${retentionSec === null ? "the server's default" : days(retentionSec)}.`);
      return;
    }
    case "public-key": {
      const key = resolveArchiveSigningKey();
      process.stdout.write(key!.publicKey.export({ format: "pem", type: "spki" }).toString());
      console.error(`(fingerprint ${key!.fingerprint}, from ${key!.source})`);
      return;
    }
    default:
      throw new UsageError(`Unknown command "${command}".`);
  }
}

await runCli("retention", USAGE, "Archive", run);
