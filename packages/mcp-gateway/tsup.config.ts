/**
 * Builds @sagaboard/mcp-gateway from its sources and the agent-side modules it shares with the
 * server (the call commands' wire contracts, the HTTP transport, the argument hash): one ESM bundle
 * for the command, one for `startGateway` and one for the in-process gateway (`throughSagaboard`). The MCP SDK, zod and OpenTelemetry (the gateway's own
 * spans, when OTEL_EXPORTER_OTLP_ENDPOINT is set) are dependencies, never bundled.
 */
import { defineConfig } from "tsup";

export default defineConfig({
  entry: { cli: "src/cli.ts", start: "src/start.ts", "in-process": "src/in-process.ts" },
  format: ["esm"],
  platform: "node",
  target: "node20",
  dts: { entry: { start: "src/start.ts", "in-process": "src/in-process.ts" }, resolve: [/^@\//] },
  splitting: true,
  clean: true,
  sourcemap: false,
  tsconfig: "tsconfig.json",
  external: ["zod", /^@modelcontextprotocol\//, /^@opentelemetry\//],
});
