/* global module */
/**
 * The layers of lib/ (lib/ARCHITECTURE.md draws them), kept by `npm run lint`. Each layer imports
 * only the layers under it, and no file reaches itself again through its imports:
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
 * app/, components/, scripts/, bench/ and packages/ sit above lib/ and may import any of it.
 */
/** A test beside its code may set its world up from any layer; cycles count for tests too. */
const TESTS = "\\.test\\.tsx?$";
const LAYERS = ["saga", "protocol", "agent", "core", "server", "demo", "desks", "delivery"];
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
    comment: `lib/${layer} may import only ${allowed.map((l) => `lib/${l}`).join(", ")}: move the shared part down a layer, or pass it in.`,
    severity: "error",
    from: { path: `^lib/${layer}/`, pathNot: TESTS },
    to: { path: "^lib/", pathNot: `^lib/(${allowed.join("|")})/` },
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
      comment: "lib/ is what the app, the scripts and the packages are built from; it never imports them.",
      severity: "error",
      from: { path: "^lib/", pathNot: TESTS },
      to: { path: "^(app|components|scripts|bench|packages)/" },
    },
    {
      name: "lib-in-layers",
      comment: "Every file of lib/ lives in one of the layers (saga, protocol, agent, core, server, demo, desks, delivery).",
      severity: "error",
      from: { path: "^lib/", pathNot: `^lib/(${LAYERS.join("|")})/|^lib/ARCHITECTURE` },
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
