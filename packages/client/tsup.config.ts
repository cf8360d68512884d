/**
 * Builds @sagaboard/client from its own folder (src/saga, src/protocol, src/agent: the same files the
 * server imports), with its own tsconfig and no alias: one ESM bundle per entry, shared chunks,
 * bundled type declarations. zod is a dependency; the frameworks and OpenTelemetry (`/tracing`) are
 * optional peers, never bundled.
 */
import { defineConfig } from "tsup";

export default defineConfig({
  entry: {
    index: "src/index.ts",
    "openai-agents": "src/openai-agents.ts",
    langgraph: "src/langgraph.ts",
    "ai-sdk": "src/ai-sdk.ts",
    wire: "src/wire.ts",
    tracing: "src/tracing.ts",
  },
  format: ["esm"],
  platform: "node",
  target: "node20",
  dts: true,
  splitting: true,
  clean: true,
  sourcemap: false,
  tsconfig: "tsconfig.json",
  external: ["zod", "@openai/agents", /^@langchain\//, "ai", /^@opentelemetry\//],
});
