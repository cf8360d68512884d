/** Whether the Next.js build in .next is missing or older than its sources (shared by start and e2e). */
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";

/** What the Next.js build is made of (the engine and the protocol are the client package's source); tests/ and scripts/ are not part of it. */
const BUILD_INPUTS = ["app", "components", "lib", "packages/client/src", "generated", "public", "next.config.js", "proxy.ts", "tsconfig.json", "package.json", "package-lock.json"];

/** The newest modification time (ms) of the files under `entry` that go into the build. */
function newestMtime(entry: string): number {
  if (!existsSync(entry)) return 0;
  const stat = statSync(entry);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs; // a deleted file changes its directory's mtime
  for (const name of readdirSync(entry)) {
    if (name === "node_modules" || name.startsWith(".")) continue;
    newest = Math.max(newest, newestMtime(path.join(entry, name)));
  }
  return newest;
}

/** The build's folder: `.next`, or SAGABOARD_NEXT_DIST_DIR (next.config.js reads the same variable). */
export function buildDir(root: string = process.cwd()): string {
  return path.join(root, process.env.SAGABOARD_NEXT_DIST_DIR || ".next");
}

/** Why a build is needed, or null when the build is up to date. */
export function needsBuild(root: string = process.cwd()): string | null {
  if (process.env.CI === "true") return "CI=true";
  const buildId = path.join(buildDir(root), "BUILD_ID");
  if (!existsSync(buildId)) return "no build yet";
  const builtAt = statSync(buildId).mtimeMs;
  const newest = Math.max(...BUILD_INPUTS.map((entry) => newestMtime(path.join(root, entry))));
  return newest > builtAt ? "sources changed since the last build" : null;
}
