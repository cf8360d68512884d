import js from "@eslint/js";
import { defineConfig, globalIgnores } from "eslint/config";
import tseslint from "typescript-eslint";

export default defineConfig(
  globalIgnores(["node_modules/", ".next/", ".next-*/", "generated/", "data/", "next-env.d.ts"]),
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
            { group: ["@prisma/*", "prisma", "@/generated/*", "@/lib/db/*"], message: "lib/saga is framework-free: persistence goes through the SagaStore port (store.ts); the Prisma store lives in lib/db." },
            { group: ["@/app/*", "@/components/*", "@/lib/*", "!@/lib/saga", "!@/lib/saga/*"], message: "lib/saga imports only itself: move what it needs into lib/saga, or pass it in." },
          ],
        },
      ],
    },
  },
);
