/**
 * Builds @sagaboard/mcp-gateway from its own folder: one ESM bundle for the command, one for
 * `startGateway` and one for the in-process gateway (`throughSagaboard`). What it shares with agents
 * (the call commands' contracts, the HTTP transport, the argument hash) it imports from
 * `@sagaboard/client`'s public exports, a dependency like the MCP SDK, zod and OpenTelemetry (the
 * gateway's own spans, when OTEL_EXPORTER_OTLP_ENDPOINT is set): none is bundled.
 */
import { defineConfig } from "tsup";

export default defineConfig({
  entry: { cli: "src/cli.ts", start: "src/start.ts", "in-process": "src/in-process.ts" },
  format: ["esm"],
  platform: "node",
  target: "node20",
  dts: { entry: { start: "src/start.ts", "in-process": "src/in-process.ts" } },
  splitting: true,
  clean: true,
  sourcemap: false,
  tsconfig: "tsconfig.json",
  external: ["zod", /^@sagaboard\/client/, /^@modelcontextprotocol\//, /^@opentelemetry\//],
});
