// Loader hooks for the dashboard bench, which imports lib functions meant for the Next.js server:
// - lib/server/auth/current-user.ts reaches a React component importing a CSS module, which Node cannot
//   load; the bench never renders it, so CSS loads as {};
// - next-auth's CommonJS providers export `{ default: fn }`, which Node's ESM interop hands to a
//   default import as the whole object (Next.js and vitest unwrap it); serve the unwrapped default.
const SHIM = "bench-shim:";
export async function resolve(specifier, context, nextResolve) {
  if (specifier.startsWith("next-auth/providers/") && !context.parentURL?.startsWith(SHIM)) {
    return { url: `${SHIM}${specifier}?from=${encodeURIComponent(context.parentURL ?? "")}`, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}
export async function load(url, context, nextLoad) {
  if (url.startsWith(SHIM)) {
    const [specifier, query] = url.slice(SHIM.length).split("?from=");
    const from = decodeURIComponent(query);
    const source = `import { createRequire } from "node:module";
const m = createRequire(${JSON.stringify(from)})(${JSON.stringify(specifier)});
export default (m && m.default) || m;`;
    return { format: "module", source, shortCircuit: true };
  }
  if (url.endsWith(".css")) return { format: "module", source: "export default {};", shortCircuit: true };
  return nextLoad(url, context);
}
