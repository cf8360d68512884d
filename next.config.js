/** @type {import("next").NextConfig} */
const nextConfig = {
  // better-sqlite3 is a native addon: it must be loaded by Node's require, never bundled.
  serverExternalPackages: ["better-sqlite3", "@prisma/adapter-better-sqlite3"],
  // The generated Prisma client (generated/prisma, "client" engine) is bundled like our own code, but
  // it reads its query compiler and schema from disk at run time, which the tracer cannot see.
  outputFileTracingIncludes: {
    "/*": ["./generated/prisma/*.wasm", "./generated/prisma/schema.prisma"],
  },
  typedRoutes: false,
  poweredByHeader: false,
};

export default nextConfig;
