/**
 * The gateway's command line: --help, where the tokens come from (never required on the command
 * line), and the options that would leak a token or could not work, refused with what to write.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseCommandLine, USAGE, UsageError } from "./options";

const upstream = ["--", "node", "server.js"];
const base = { SAGABOARD_URL: "http://localhost:3000" };

describe("the gateway's command line", () => {
  it("--help asks for the usage, which names every option", () => {
    expect(parseCommandLine(["--help"], {})).toEqual({ help: true });
    expect(parseCommandLine(["-h", "--url", "x"], {})).toEqual({ help: true });
    for (const option of ["--token-file", "--pass-env", "--client-token-file", "--allow-origin", "--allow-host", "--state-dir", "--cancel-grace-ms", "--relist-ms"]) expect(USAGE).toContain(option);
  });

  it("the command prints the usage and exits 0 for --help, and exits 2 with one line for a bad option", () => {
    const cli = path.join(process.cwd(), "packages/mcp-gateway/src/cli.ts");
    const help = spawnSync(process.execPath, ["--import", "tsx", cli, "--help"], { encoding: "utf8", env: { PATH: process.env.PATH ?? "", NODE_ENV: "test" } });
    expect(help.status).toBe(0);
    expect(help.stdout).toContain("Usage:");
    expect(help.stderr).toBe("");
    const bad = spawnSync(process.execPath, ["--import", "tsx", cli, "--nope"], { encoding: "utf8", env: { PATH: process.env.PATH ?? "", NODE_ENV: "test" } });
    expect(bad.status).toBe(2);
    expect(bad.stderr.trim().split("\n")).toHaveLength(1);
    expect(bad.stderr).toMatch(/^sagaboard-mcp-gateway: .*See --help\./);
  });

  it("reads the token from SAGABOARD_TOKEN or a file, and warns when it is on the command line", () => {
    const fromEnv = parseCommandLine(upstream, { ...base, SAGABOARD_TOKEN: "sgb_env" });
    expect(fromEnv).toMatchObject({ help: false, warnings: [], config: { sagaboard: { token: "sgb_env" } } });
    const dir = mkdtempSync(path.join(tmpdir(), "gw-options-"));
    writeFileSync(path.join(dir, "token"), "sgb_file\n");
    expect(parseCommandLine(["--token-file", path.join(dir, "token"), ...upstream], base)).toMatchObject({ config: { sagaboard: { token: "sgb_file" } } });
    const onLine = parseCommandLine(["--token", "sgb_argv", ...upstream], base);
    expect(onLine).toMatchObject({ config: { sagaboard: { token: "sgb_argv" } } });
    expect(onLine.help ? [] : onLine.warnings).toEqual([expect.stringContaining("can be read by every user of this machine")]);
    expect(() => parseCommandLine(upstream, base)).toThrow(/SAGABOARD_TOKEN or a file named by --token-file/);
    expect(() => parseCommandLine(["--token-file", path.join(dir, "missing"), ...upstream], base)).toThrow(/cannot read the agent token from/);
  });

  it("passes the real server only the variables the operator names, never Sagaboard's own", () => {
    const parsed = parseCommandLine(["--pass-env", "MEMORY_FILE_PATH", "--pass-env", "NOT_SET", ...upstream], { ...base, SAGABOARD_TOKEN: "sgb_x", MEMORY_FILE_PATH: "/tmp/m.jsonl" });
    expect(parsed).toMatchObject({ config: { upstream: { command: "node", args: ["server.js"], env: { MEMORY_FILE_PATH: "/tmp/m.jsonl" } } } });
    expect(parsed.help ? [] : parsed.warnings).toEqual([expect.stringContaining("--pass-env NOT_SET")]);
    expect(() => parseCommandLine(["--pass-env", "SAGABOARD_TOKEN", ...upstream], { ...base, SAGABOARD_TOKEN: "sgb_x" })).toThrow(/never reach the real server/);
    expect(() => parseCommandLine(["--pass-env", "sagaboard_worker_token", ...upstream], { ...base, SAGABOARD_TOKEN: "sgb_x" })).toThrow(UsageError);
  });

  it("refuses what could not work, saying what to write", () => {
    const env = { ...base, SAGABOARD_TOKEN: "sgb_x" };
    expect(() => parseCommandLine([], env)).toThrow(/name the real server/);
    expect(() => parseCommandLine(upstream, { SAGABOARD_TOKEN: "sgb_x" })).toThrow(/--url/);
    expect(() => parseCommandLine(["--hold-wait-ms", "soon", ...upstream], env)).toThrow(/--hold-wait-ms must be a whole number of milliseconds/);
    expect(() => parseCommandLine(["--lookup-by-key", "nope", ...upstream], env)).toThrow(/TOOL=LOOKUP_TOOL/);
    expect(() => parseCommandLine(["--frobnicate", ...upstream], env)).toThrow(/See --help/);
  });
});
