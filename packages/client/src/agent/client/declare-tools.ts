/**
 * A team declares its own tools from TypeScript, as the Python client's `declare()` does: the
 * registry becomes a manifest (class, lookup, argument schema from the zod schema, compensator,
 * owner), POSTed to /api/v1/tools/declarations under the team's token. Declared tools land
 * unreviewed: every call is held until an admin accepts them at /admin/tools.
 */
import * as z from "zod";
import * as api from "../../protocol/contracts/declarations";
import type { ToolRegistry } from "../../saga/tools";
import { ToolClass } from "../../saga/vocabulary";
import type { TDeclarationResult, TDeclaredTool, TToolManifest } from "../../protocol/manifest";
import { Transport, type TransportOptions } from "./transport";

/**
 * What the registry cannot say of a tool, added by hand (a revocation window, an undo in words...).
 * The correction template, the audience and the compensation's arguments come from the tool's own
 * functions, called once with placeholder arguments; give them here when those compute more than a
 * template can say.
 */
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

/**
 * Arguments whose every field reads as its own placeholder (`args.room` is "{{room}}"), so a builder
 * written for real arguments (`(a) => ({ room: a.room })`) yields the template the server fills in.
 */
function placeholders(): never {
  return new Proxy({}, { get: (_t, key) => (typeof key === "string" ? `{{${key}}}` : undefined) }) as never;
}

/** The string template a builder yields from placeholders, or null when it computes something a template cannot say. */
function templateOf(build: () => unknown): Record<string, string> | null {
  try {
    const built = build();
    if (!built || typeof built !== "object" || Array.isArray(built)) return null;
    const entries = Object.entries(built);
    // Arithmetic or formatting on a placeholder leaves NaN, undefined or [object ...]: no template says that.
    const plain = entries.every(([, v]) => typeof v === "string" && !/\bNaN\b|\bundefined\b|\[object /.test(v));
    return plain ? (Object.fromEntries(entries) as Record<string, string>) : null;
  } catch {
    return null;
  }
}

/** Static audience labels ("customer", "finance"): ones read from the arguments are decided per call, not declared. */
function staticAudience(audience: unknown): string[] | undefined {
  if (!Array.isArray(audience)) return undefined;
  const labels = audience.filter((a): a is string => typeof a === "string" && !a.includes("{{"));
  return labels.length > 0 && labels.length === audience.length ? labels : undefined;
}

/** The tool's correction template and audience, from its own functions, for the admin to review instead of typing them. */
function correctionOf(def: ReturnType<ToolRegistry["list"]>[number]): Pick<TDeclaredTool, "correction" | "audience"> {
  const out: Pick<TDeclaredTool, "correction" | "audience"> = {};
  const draft = def.correction ? templateOf(() => { const d = def.correction!(placeholders()); return d ? { subject: d.subject, body: d.body } : null; }) : null;
  if (draft?.subject && draft.body) out.correction = { subject: draft.subject, body: draft.body };
  let audience: unknown;
  try {
    audience = def.audience ? def.audience(placeholders()) : def.correction?.(placeholders())?.audience;
  } catch {
    audience = undefined;
  }
  const labels = staticAudience(audience);
  if (labels) out.audience = labels;
  return out;
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
    if (def.compensation && def.class !== ToolClass.PURE) entry.compensation = { tool: def.compensation.with, args: templateOf(() => def.compensation!.build(placeholders())) ?? {} };
    Object.assign(entry, correctionOf(def));
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
