/**
 * The argument schema a team declared with a tool (JSON Schema in its manifest entry), as zod. A tool
 * declared without one (or with one zod cannot read) takes any JSON, even a bare string: an admin
 * accepts such a tool only knowingly (lib/server/tools/update-tool.ts), and its page says so.
 */
import * as z from "zod";

/** The declared JSON Schema of a tool's arguments as zod, or null (none declared, or not one zod can read). */
export function declaredArgsSchema(declared: unknown): z.ZodType | null {
  const schema = declared && typeof declared === "object" && !Array.isArray(declared) ? (declared as { argsSchema?: unknown }).argsSchema : undefined;
  if (!schema || typeof schema !== "object" || Array.isArray(schema)) return null;
  try {
    return z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch {
    return null; // an unreadable schema checks nothing; the admin sees the declaration as sent
  }
}
