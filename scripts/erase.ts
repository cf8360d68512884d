/**
 * Erases a person's personal data (lib/core/privacy/ARCHITECTURE.md): destroys their data keys and
 * records a SUBJECT_ERASED audit event, in one transaction; /admin/personal-data does the same.
 *
 *   npm run erase -- --subject ada@example.com --reason "request 881" [--now | --when-settled] [--by you@example.com]
 *
 * Refused (exit 1, saying why) for a subject with no data, one already erased, or one whose steps may
 * still need the data (unsettled, or inside a revocation window: the runs are named) unless --now, which
 * turns those steps into escalations (they can no longer be compensated automatically), or
 * --when-settled, which schedules the erasure for when they settle (the app server checks every half minute).
 */
import { parseArgs } from "node:util";
import type { PrismaClient } from "@/lib/core/db/prisma";
import { eraseSubject } from "@/lib/server/privacy/erase-subject";
import { cliUser, runCli, UsageError } from "./lib/cli";

const USAGE = `Usage:
  npm run erase -- --subject VALUE --reason "..." [--now | --when-settled] [--by you@example.com]`;

async function run(prisma: PrismaClient, argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { subject: { type: "string" }, reason: { type: "string" }, now: { type: "boolean" }, "when-settled": { type: "boolean" }, by: { type: "string" } } });
  if (values.now && values["when-settled"]) throw new UsageError("Choose one: --now erases at once (open steps become escalations), --when-settled waits for them to settle.");
  const result = await eraseSubject(prisma, { subject: values.subject ?? "", reason: values.reason ?? "", now: values.now ?? false, whenSettled: values["when-settled"] ?? false }, { type: "user", id: values.by ?? cliUser() });
  if (!result.ok && result.reason === "scheduled") {
    console.log(`erase: ${result.message}`);
    return;
  }
  if (!result.ok) {
    console.error(`erase: ${result.message}`);
    process.exitCode = 1;
    return;
  }
  console.log(
    `Erased on ${result.erasedAt.toISOString()}: ${result.keyIds.length} key(s) destroyed; ${result.steps} step(s) now read "erased on ${result.erasedAt.toISOString().slice(0, 10)}".` +
      (result.escalations.length > 0 ? ` ${result.escalations.length} step(s) can no longer be compensated automatically: escalations ${result.escalations.join(", ")}.` : ""),
  );
}

await runCli("erase", USAGE, "SubjectKey", run);
