#!/usr/bin/env node
/**
 * sagaboard-mcp-gateway: point an MCP client at this command instead of the real server.
 *
 *   SAGABOARD_TOKEN=sgb_... sagaboard-mcp-gateway --url http://localhost:3000 -- npx -y @modelcontextprotocol/server-memory
 *
 * `--help` prints every option (options.ts). The tokens are read from the environment or a file and
 * then removed from this process's environment, so nothing the gateway starts inherits them.
 */
import { parseCommandLine, USAGE, UsageError } from "./options";
import { startGateway } from "./start";

function fail(message: string): never {
  process.stderr.write(`sagaboard-mcp-gateway: ${message}\n`);
  process.exit(2);
}

let parsed;
try {
  parsed = parseCommandLine(process.argv.slice(2), process.env);
} catch (e) {
  if (e instanceof UsageError) fail(e.message);
  throw e;
}
if (parsed.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
for (const warning of parsed.warnings) process.stderr.write(`sagaboard-mcp-gateway: ${warning}\n`);
delete process.env.SAGABOARD_TOKEN;
delete process.env.SAGABOARD_WORKER_TOKEN;
startGateway(parsed.config).catch((e: unknown) => fail(e instanceof Error ? e.message : String(e)));
