/**
 * `npm run test:faults`: every fault suite on SQLite, then on PostgreSQL (the local server, as
 * `npm run test:pg`), then the whole fault matrix as one table: each suite's `fault-matrix:` lines
 * (tests/faults/fault-matrix.ts), gathered through SAGABOARD_FAULT_MATRIX_FILE. Exits non-zero when
 * either run failed; the table still prints, so a red cell is read beside the others.
 * Arguments are passed to vitest (e.g. a suite's file to run only that one).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/**
 * The suites whose faults print `fault-matrix:` lines, by the name their lines start with (and their
 * file). After a run of the whole directory, a suite that printed nothing on a store is named under the
 * table, so a suite silently skipped or renamed shows instead of leaving a shorter table.
 */
const MATRIX_SUITES: Record<string, string> = {
  "approval-unavailable": "approval-unavailable.test.ts",
  "permissions-mid-run": "permissions-mid-run.test.ts",
  "malformed-answers": "malformed-answers.test.ts",
  "clock-skew": "clock-skew.test.ts",
  mcp: "mcp-gateway.test.ts",
  "database-unavailable": "database-unavailable.test.ts",
  network: "network-faults.test.ts",
};

const dir = mkdtempSync(path.join(os.tmpdir(), "sagaboard-fault-matrix-"));
const file = path.join(dir, "matrix.txt");
const targets = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ["tests/faults"];
const runs = [
  { label: "sqlite", env: { SAGABOARD_TEST_PG: "" } },
  { label: "postgresql", env: { SAGABOARD_TEST_PG: "1" } },
];
let failed = false;
for (const run of runs) {
  const result = spawnSync("npx", ["vitest", "run", ...targets], { stdio: "inherit", env: { ...process.env, ...run.env, SAGABOARD_FAULT_MATRIX_FILE: file } });
  if (result.status !== 0) {
    failed = true;
    console.error(`fault suites failed on ${run.label} (exit ${result.status ?? result.signal})`);
  }
}
const lines = existsSync(file) ? readFileSync(file, "utf8").split("\n").filter((l) => l.startsWith("fault-matrix: ")) : [];
rmSync(dir, { recursive: true, force: true });
console.log(`\nThe fault matrix (${lines.length} lines):`);
for (const line of lines.sort()) console.log(line);
if (process.argv.slice(2).length === 0) {
  for (const [suite, file] of Object.entries(MATRIX_SUITES)) {
    for (const { label } of runs) {
      if (!lines.some((l) => l.startsWith(`fault-matrix: ${suite}:`) && l.includes(` store=${label} `))) {
        console.error(`no fault-matrix line from ${file} (${suite}:*) on ${label}`);
        failed = true;
      }
    }
  }
}
process.exit(failed ? 1 : 0);
