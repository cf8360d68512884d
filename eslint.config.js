import js from "@eslint/js";
import { defineConfig, globalIgnores } from "eslint/config";
import tseslint from "typescript-eslint";

export default defineConfig(
  globalIgnores(["node_modules/", ".next/", ".next-*/", "generated/", "data/", "next-env.d.ts", "packages/*/dist/"]),
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    rules: {
      // A leading underscore says "unused on purpose" (`const { allowed: _allowed, ...rest } = x`).
      "@typescript-eslint/no-unused-vars": [
        "error",
        {
          argsIgnorePattern: "^_",
          varsIgnorePattern: "^_",
          caughtErrorsIgnorePattern: "^_",
          destructuredArrayIgnorePattern: "^_",
        },
      ],
    },
  },
  {
    // The engine knows nothing of the framework or the database (lib/saga/ARCHITECTURE.md): it gets a
    // store, a clock and ids, so it runs the same under Next.js, in the worker and in a test.
    files: ["lib/saga/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            { group: ["next", "next/*", "react", "react/*", "react-dom", "react-dom/*"], message: "lib/saga is framework-free: no Next.js or React; the app calls the engine, never the other way." },
            { group: ["next-auth", "next-auth/*"], message: "lib/saga is framework-free: who the actor is arrives as an Actor value, not a session." },
            { group: ["@prisma/*", "prisma", "@/generated/*", "@/lib/core/db/*"], message: "lib/saga is framework-free: persistence goes through the SagaStore port (store.ts); the Prisma store lives in lib/core/db." },
            { group: ["@/app/*", "@/components/*", "@/lib/*", "!@/lib/saga", "!@/lib/saga/*"], message: "lib/saga imports only itself: move what it needs into lib/saga, or pass it in." },
          ],
        },
      ],
    },
  },
  {
    // What @sagaboard/client bundles (packages/client): lib/agent and the protocol under it have no
    // server in it. A file there that needs the database or the framework belongs to the server; the
    // layer rule (.dependency-cruiser.cjs) keeps lib/core out of them, and the package test
    // (tests/process/packages.test.ts) checks the whole import graph at run time too.
    files: ["lib/agent/**/*.ts", "lib/protocol/**/*.ts", "packages/*/src/**/*.ts"],
    ignores: ["**/*.test.ts", "lib/agent/adapters/testkit.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            { group: ["next", "next/*", "next-auth", "next-auth/*", "react", "react/*"], message: "The agent-side client has no web framework in it: keep this in the server's files." },
            { group: ["@prisma/*", "prisma", "@/generated/*", "@/lib/core/db/*", "pg", "better-sqlite3"], message: "The agent-side client has no database in it: talk to the server's commands, or move the server part out of this file." },
          ],
        },
      ],
    },
  },
  {
    // The screens take the dashboard API's URLs from lib/delivery/dashboard-paths.ts, the table the
    // endpoint contracts use too, so a route and the screen calling it can never disagree.
    files: ["components/**/*.tsx", "app/**/*.tsx"],
    rules: {
      "no-restricted-syntax": [
        "error",
        { selector: "Literal[value=/^\\/api\\/dashboard/]", message: "Take the URL from DashboardPath (lib/delivery/dashboard-paths.ts): dashboardUrl(DashboardPath.x, { id })." },
        { selector: "TemplateElement[value.raw=/^\\/api\\/dashboard/]", message: "Take the URL from DashboardPath (lib/delivery/dashboard-paths.ts): dashboardUrl(DashboardPath.x, { id })." },
      ],
    },
  },
  {
    // Links prefetch on a person's intent, not on sight (components/link.tsx): every screen is rendered
    // on request, so each viewport prefetch is a request the server answers.
    files: ["components/**/*.tsx", "app/**/*.tsx"],
    ignores: ["components/link.tsx"],
    rules: {
      "no-restricted-imports": ["error", { paths: [{ name: "next/link", message: "Import Link from @/components/link: it prefetches when a person points at the link, not whenever it scrolls into view." }] }],
    },
  },
);
