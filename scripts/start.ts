/**
 * `npm start`: migrates the SQLite database, records the demo runs on first start, builds the app if
 * it has not been built, and serves it, printing where to open it.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";

const port = process.env.PORT ?? "3000";
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const npx = process.platform === "win32" ? "npx.cmd" : "npx";
const run = (cmd: string, args: string[]) => execFileSync(cmd, args, { stdio: "inherit" });

run(npm, ["run", "--silent", "db:migrate"]);
run(npm, ["run", "--silent", "db:seed"]);
if (!existsSync(".next/BUILD_ID") || process.env.SAGABOARD_REBUILD === "1") run(npm, ["run", "--silent", "build"]);

const server = spawn(npx, ["next", "start", "-p", port], { stdio: ["ignore", "pipe", "inherit"] });
server.stdout.on("data", (chunk: Buffer) => {
  process.stdout.write(chunk);
  if (chunk.toString().includes("Ready")) {
    console.log(`\nSagaboard is running at http://localhost:${port}`);
    console.log("Sign-in is not needed yet: the dashboard is read-only until accounts and roles land.");
    console.log("Demo runs are recorded; `npm run db:seed -- --force` adds another set.\n");
  }
});
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => server.kill(signal));
server.on("exit", (code) => process.exit(code ?? 0));
