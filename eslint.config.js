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
    // What the packages ship (packages/*/src): no server in them. A file there that needs the database
    // or the framework belongs to the server. A package is a folder that builds alone (its own tsconfig),
    // so it reaches nothing through the app's `@/` alias: its own files relatively, another package by
    // its name (.dependency-cruiser.cjs refuses lib/ and app/ too); the package test
    // (tests/process/packages.test.ts) builds each from a copy of its folder and checks what it loads.
    // A later block wins for the same rule, so the saga engine's block repeats these patterns.
    files: ["packages/*/src/**/*.ts"],
    ignores: ["**/*.test.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            { group: ["next", "next/*", "next-auth", "next-auth/*", "react", "react/*"], message: "The agent-side client has no web framework in it: keep this in the server's files." },
            { group: ["@prisma/*", "prisma", "pg", "better-sqlite3"], message: "The agent-side client has no database in it: talk to the server's commands, or move the server part out of this file." },
            { group: ["@/*"], message: "A package builds alone: import its own files relatively, and another package by its name (@sagaboard/client)." },
          ],
        },
      ],
    },
  },
  {
    // The engine knows nothing of the framework or the database (packages/client/src/saga/ARCHITECTURE.md):
    // it gets a store, a clock and ids, so it runs the same under Next.js, in the worker and in a test.
    files: ["packages/client/src/saga/**/*.ts"],
    ignores: ["**/*.test.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            { group: ["next", "next/*", "react", "react/*", "react-dom", "react-dom/*"], message: "The saga engine is framework-free: no Next.js or React; the app calls the engine, never the other way." },
            { group: ["next-auth", "next-auth/*"], message: "The saga engine is framework-free: who the actor is arrives as an Actor value, not a session." },
            { group: ["@prisma/*", "prisma", "pg", "better-sqlite3"], message: "The saga engine is framework-free: persistence goes through the SagaStore port (store.ts); the Prisma store lives in lib/core/db." },
            { group: ["@/*", "../*"], message: "The saga engine imports only itself (./): move what it needs into saga/, or pass it in." },
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
