/* global process -- next.config.js runs in Node */
/**
 * Headers every response carries, pages and API alike: nobody may frame Sagaboard (clickjacking an
 * Approve button), no content sniffing, a strict referrer, no powerful browser features. The page
 * Content-Security-Policy (with a per-request nonce) and HSTS come from proxy.ts.
 */
const SECURITY_HEADERS = [
  { key: "X-Frame-Options", value: "DENY" },
  { key: "X-Content-Type-Options", value: "nosniff" },
  { key: "Referrer-Policy", value: "strict-origin-when-cross-origin" },
  { key: "Permissions-Policy", value: "camera=(), microphone=(), geolocation=(), payment=(), usb=()" },
  { key: "Cross-Origin-Opener-Policy", value: "same-origin" },
];

/** @type {import("next").NextConfig} */
const nextConfig = {
  async headers() {
    return [{ source: "/:path*", headers: SECURITY_HEADERS }];
  },
  // better-sqlite3 is a native addon: it must be loaded by Node's require, never bundled.
  serverExternalPackages: ["better-sqlite3", "@prisma/adapter-better-sqlite3"],
  // The generated Prisma clients (generated/prisma for SQLite, generated/prisma-pg for PostgreSQL;
  // "client" engine) are bundled like our own code, but they read their query compiler and schema
  // from disk at run time, which the tracer cannot see.
  outputFileTracingIncludes: {
    "/*": [
      "./generated/prisma/*.wasm",
      "./generated/prisma/schema.prisma",
      "./generated/prisma-pg/*.wasm",
      "./generated/prisma-pg/schema.prisma",
    ],
  },
  // Where the build goes (default .next): two engineers' browser suites on one machine build apart.
  distDir: process.env.SAGABOARD_NEXT_DIST_DIR || ".next",
  typedRoutes: false,
  // Pages a role may not open answer a real 403 (requirePageUser calls forbidden(); app/forbidden.tsx).
  experimental: { authInterrupts: true },
  poweredByHeader: false,
};

export default nextConfig;
