/**
 * Personal data's keys and rows from the command line (lib/core/privacy/ARCHITECTURE.md):
 *
 *   npm run personal-data -- check-key                          (is the master key this database's?)
 *   npm run personal-data -- seal-existing [--tool NAME]        (seal rows written before their tool declared its personal fields)
 *   npm run personal-data -- rotate-master-key --new-key-file F (re-wrap every key under F's key; then point SAGABOARD_MASTER_KEY_FILE at F and restart)
 *
 * Erasing a person is `npm run erase`.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import type { PrismaClient } from "@/lib/core/db/prisma";
import { parseMasterKey } from "@/lib/core/privacy/master-key";
import { personalDataVault } from "@/lib/core/privacy/personal-data-vault";
import { rotateMasterKey } from "@/lib/server/privacy/rotate-master-key";
import { sealExistingSteps } from "@/lib/server/privacy/seal-existing-steps";
import { cliUser, required, runCli, UsageError } from "./lib/cli";

const USAGE = `Usage:
  npm run personal-data -- check-key
  npm run personal-data -- seal-existing [--tool NAME]
  npm run personal-data -- rotate-master-key --new-key-file FILE`;

async function run(prisma: PrismaClient, argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({ args: argv, allowPositionals: true, options: { tool: { type: "string" }, "new-key-file": { type: "string" } } });
  switch (positionals[0]) {
    case "check-key":
      await personalDataVault(prisma).loadKeyring();
      console.log("The master key is this database's.");
      return;
    case "seal-existing": {
      const n = await sealExistingSteps(prisma, values.tool);
      console.log(`Sealed ${n} step(s) written before their tool declared its personal fields.`);
      return;
    }
    case "rotate-master-key": {
      const file = required(values["new-key-file"], "new-key-file");
      const next = parseMasterKey(readFileSync(file, "utf8"), file);
      const n = await rotateMasterKey(prisma, next, cliUser());
      console.log(`Re-wrapped ${n} data key(s) and the subject-hash key under the key in ${file}. Now set SAGABOARD_MASTER_KEY_FILE=${file} (or SAGABOARD_MASTER_KEY) for every process and restart them; keep the old key until they all run with the new one.`);
      return;
    }
    default:
      throw new UsageError(positionals[0] ? `Unknown command "${positionals[0]}".` : "Say what to do: check-key, seal-existing or rotate-master-key.");
  }
}

await runCli("personal-data", USAGE, "SubjectKey", run);
