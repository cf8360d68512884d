/* global process, console -- a plain Node script (no tsx at install time) */
// Marks the generated Prisma clients' run-time path lookups (the schema folder under the working
// directory, Prisma's own .env.vault lookup) for Next's bundler to leave alone: as generated, each
// one makes Turbopack trace the whole project into the server build and print a warning per client
// at every `next build`. The paths are read at run time either way; only the tracing changes.
// Run after `prisma generate` (postinstall); rerunning it changes nothing.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

const root = process.cwd();
const MARK = "/*turbopackIgnore: true*/";
const edits = [
  { file: "generated/prisma/index.js", from: "path.join(process.cwd(), alternativePath)", to: `path.join(${MARK} process.cwd(), alternativePath)` },
  { file: "generated/prisma-pg/index.js", from: "path.join(process.cwd(), alternativePath)", to: `path.join(${MARK} process.cwd(), alternativePath)` },
  { file: "generated/prisma/runtime/client.js", from: 'resolve(process.cwd(),".env.vault")', to: `resolve(${MARK}process.cwd(),".env.vault")` },
  // ... and the existsSync of that path right after it (its minified names vary by Prisma version).
  { file: "generated/prisma/runtime/client.js", from: /"\.env\.vault"\);return ([\w$]+)\.existsSync\(([\w$]+)\)/, to: `".env.vault");return $1.existsSync(${MARK}$2)`, marked: `.existsSync(${MARK}` },
];

let changed = 0;
for (const { file, from, to, marked = to } of edits) {
  const full = path.join(root, file);
  if (!existsSync(full)) {
    console.error(`prisma-no-trace: ${file} is missing; run \`prisma generate\` first (npm run db:generate).`);
    process.exit(1);
  }
  const source = readFileSync(full, "utf8");
  if (source.includes(marked)) continue;
  const next = source.replace(from, to);
  if (next === source) {
    // A newer Prisma may have moved the lookup: the build still works, it only warns again.
    console.warn(`prisma-no-trace: ${file} no longer has ${from}; next build may warn that it traces the whole project.`);
    continue;
  }
  writeFileSync(full, next);
  changed++;
}
console.log(`prisma-no-trace: the generated clients' run-time path lookups are left out of the build's tracing (${changed} edit(s) made).`);
