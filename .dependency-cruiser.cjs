/* global module */
/**
 * The layers of Sagaboard (lib/ARCHITECTURE.md draws them), kept by `npm run lint`. Each layer imports
 * only the layers under it, and no file reaches itself again through its imports. The three lowest
 * are the source of @sagaboard/client (packages/client/src/): the server imports the same files.
 *
 *   delivery   routes and what wraps them: the API's routes, contracts and OpenAPI, sessions on a request
 *   desks      what people do at the dashboard: pivots, escalations, corrections, revokes, runs, audit, overview
 *   demo       the simulated systems, their connectors and the demo's seed
 *   server     what the server does for everyone: sign-in and users, agent tokens, the tool table,
 *              the agent API's commands, worker tasks, notifications, SLAs
 *   core       the database (every SQL statement, transactions, the audit chain), logs and metrics, headers
 *   agent      what runs in an agent's or a team's process: the HTTP client, adapters, the worker loop
 *   protocol   what agents and the server say to each other: contracts, schemas, errors, task payloads, trace context
 *   saga       the saga engine, its ports and vocabulary
 *
 * app/, components/, scripts/ and bench/ sit above lib/ and may import any of it; a package imports
 * only itself and another package (a package is a folder that builds alone).
 */
/** A test beside its code may set its world up from any layer; cycles count for tests too. */
const TESTS = "\\.test\\.tsx?$";
const LAYERS = ["saga", "protocol", "agent", "core", "server", "demo", "desks", "delivery"];
/** Where each layer lives: the agent side's three in the client package, the server's in lib/. */
const CLIENT_LAYERS = ["saga", "protocol", "agent"];
const home = (layer) => (CLIENT_LAYERS.includes(layer) ? `packages/client/src/${layer}/` : `lib/${layer}/`);
const anyLayer = `^(${LAYERS.map(home).join("|")})`;
/** Which lower layers each layer may import (agent and core are siblings: neither needs the other). */
const MAY_IMPORT = {
  saga: [],
  protocol: ["saga"],
  agent: ["saga", "protocol"],
  core: ["saga", "protocol"],
  server: ["saga", "protocol", "agent", "core"],
  demo: ["saga", "protocol", "agent", "core", "server"],
  desks: ["saga", "protocol", "agent", "core", "server", "demo"],
  delivery: ["saga", "protocol", "agent", "core", "server", "demo", "desks"],
};

const layerRules = LAYERS.map((layer) => {
  const allowed = [layer, ...MAY_IMPORT[layer]];
  return {
    name: `layer-${layer}`,
    comment: `${home(layer)} may import only ${allowed.map(home).join(", ")}: move the shared part down a layer, or pass it in.`,
    severity: "error",
    from: { path: `^${home(layer)}`, pathNot: TESTS },
    to: { path: anyLayer, pathNot: `^(${allowed.map(home).join("|")})` },
  };
});

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "An import cycle: one of its files needs a part of another that should live lower (a type, a vocabulary) or be passed in.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    ...layerRules,
    {
      name: "lib-not-above",
      comment: "lib/ is what the app and the scripts are built from; it never imports them, nor a package's files outside the client's layers (its entry points, the gateway).",
      severity: "error",
      from: { path: "^lib/", pathNot: TESTS },
      to: { path: "^(app|components|scripts|bench|packages)/", pathNot: `^packages/client/src/(${CLIENT_LAYERS.join("|")})/` },
    },
    {
      name: "packages-stand-alone",
      comment: "A package is a folder that builds alone: it imports its own files and other packages by name, never lib/, app/ or the rest of the checkout.",
      severity: "error",
      from: { path: "^packages/", pathNot: TESTS },
      to: { path: "^(lib|app|components|scripts|bench|tests|generated)/|^(proxy|instrumentation)\\.ts$" },
    },
    {
      name: "gateway-uses-client-exports",
      comment: "The MCP gateway uses @sagaboard/client as any team would: its public entry points (the root, /wire, /tracing, the adapters), never the files behind them.",
      severity: "error",
      from: { path: "^packages/mcp-gateway/" },
      to: { path: "^packages/client/", pathNot: "^packages/client/src/(index|wire|tracing|openai-agents|langgraph|ai-sdk)\\.ts$" },
    },
    {
      name: "lib-in-layers",
      comment: "Every file of lib/ lives in one of the server's layers (core, server, demo, desks, delivery); the agent side's (saga, protocol, agent) are in packages/client/src.",
      severity: "error",
      from: { path: "^lib/", pathNot: `^lib/(${LAYERS.filter((l) => !CLIENT_LAYERS.includes(l)).join("|")})/|^lib/ARCHITECTURE` },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)(node_modules|generated|\\.next|dist)/" },
    // Type-only imports count: a cycle of types is still two files that cannot be read apart.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".tsx", ".mts", ".js", ".mjs", ".cjs", ".json"],
    },
  },
};
