/**
 * A team declares its own tools from TypeScript, as the Python client's `declare()` does: the
 * registry becomes a manifest (class, lookup, argument schema from the zod schema, compensator,
 * owner), POSTed to /api/v1/tools/declarations under the team's token. Declared tools land
 * unreviewed: every call is held until an admin accepts them at /admin/tools.
 */
import * as z from "zod";
import * as api from "@/lib/protocol/contracts/declarations";
import type { ToolRegistry } from "@/lib/saga/tools";
import { ToolClass } from "@/lib/saga/vocabulary";
import type { TDeclarationResult, TDeclaredTool, TToolManifest } from "@/lib/protocol/manifest";
import { Transport, type TransportOptions } from "./transport";

/** What the registry cannot say of a tool, added by hand (a correction template, a revocation window...). */
export type DeclarationExtras = Record<string, Partial<Omit<TDeclaredTool, "name" | "class" | "lookup">>>;

/** A JSON schema of a zod schema, or undefined when the schema has no JSON form (a transform). */
function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> | undefined {
  try {
    const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
    return rest;
  } catch {
    return undefined;
  }
}

/** The manifest of every tool and compensator in `registry` (PURE tools included: they are read-only calls). */
export function manifestOf(registry: ToolRegistry, extras: DeclarationExtras = {}): TToolManifest {
  const tools = registry.list().map((def) => {
    const entry: TDeclaredTool = {
      name: def.name,
      class: def.class,
      lookup: typeof def.lookup === "function",
      ...(def.description ? { description: def.description } : {}),
      ...(def.owner ? { owner: def.owner } : {}),
    };
    const schema = jsonSchemaOf(def.args);
    if (schema) entry.argsSchema = schema;
    if (def.compensation && def.class !== ToolClass.PURE) entry.compensation = { tool: def.compensation.with, args: {} };
    return { ...entry, ...extras[def.name] };
  });
  const compensators = registry.listCompensators().map((c) => {
    const schema = jsonSchemaOf(c.args);
    return { name: c.name, ...(schema ? { argsSchema: schema } : {}) };
  });
  return { tools, compensators };
}

/**
 * Declares the registry's tools into the token's namespace (`<token name>.<tool>`; name tools with
 * that prefix, or bare names get it). Returns where each tool stands: a new one is UNREVIEWED.
 */
export async function declareTools(options: TransportOptions, registry: ToolRegistry, extras: DeclarationExtras = {}): Promise<TDeclarationResult> {
  const http = new Transport(options);
  return http.request("POST", api.declareTools.path, api.declareTools.response, manifestOf(registry, extras));
}
