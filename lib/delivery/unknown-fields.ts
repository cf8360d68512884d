/**
 * Unknown fields: zod objects strip keys they do not declare, so a typo in a field name
 * (`stepIdxx`) would be a silent no-op. Every request's body and query are walked against the
 * fields their schemas accept, and each key no schema declares is reported (400, naming it).
 *
 * Which keys a schema accepts is read from its JSON Schema as an input (`z.toJSONSchema(schema,
 * { io: "input" })`, as the OpenAPI document is generated), once per schema:
 * - an object with no `additionalProperties` (z.object) or `false` (z.strictObject) accepts only
 *   its `properties`;
 * - an object whose `additionalProperties` is a schema (z.looseObject, z.record) accepts any key,
 *   its value walked against that schema; a schema that says nothing (`{}`: z.json() leaves,
 *   z.unknown(), z.custom) accepts anything;
 * - a union (anyOf/oneOf) accepts a value when one of its branches does, and reports against the
 *   branch the value matches best (its discriminator, then the fewest unknown keys);
 * - arrays are walked item by item (`items`, `prefixItems`), `$ref` is followed into `$defs`.
 * Type errors are left to the schema itself: the walk only looks at keys.
 */
import * as z from "zod";
import type { TErrorDetail } from "@/packages/client/src/protocol/errors";

/** A JSON Schema node as z.toJSONSchema produces it (the parts the walk reads). */
type JsonSchemaNode = boolean | { [key: string]: unknown };

/** A compiled view of a schema: its JSON Schema and the definitions its `$ref`s point to. */
export interface FieldMap {
  /** The root JSON Schema (input side). */
  readonly root: JsonSchemaNode;
  /** `$defs` of the root, by name. */
  readonly defs: Readonly<Record<string, JsonSchemaNode>>;
}

/** Known-field lists longer than this are not spelled out in the message. */
const MAX_LISTED_FIELDS = 12;

const compiled = new WeakMap<z.ZodType, FieldMap>();

/** The field map of `schema` (computed once per schema object). */
export function fieldMapOf(schema: z.ZodType): FieldMap {
  let map = compiled.get(schema);
  if (!map) {
    // unrepresentable: "any" so a schema JSON Schema cannot express (a date, a custom check) accepts
    // anything here instead of throwing: the schema's own parse still judges the value.
    const json = z.toJSONSchema(schema, { io: "input", unrepresentable: "any", target: "draft-2020-12" }) as { [key: string]: unknown };
    map = { root: json, defs: (json.$defs ?? {}) as Record<string, JsonSchemaNode> };
    compiled.set(schema, map);
  }
  return map;
}

/** Every key of `value` that `schema` does not declare, as `{ path, message }` under `prefix`. */
export function findUnknownFields(schema: z.ZodType, value: unknown, prefix: string): TErrorDetail[] {
  const map = fieldMapOf(schema);
  return walk(map, map.root, value, prefix, 0);
}

/** `$ref`s followed in a row before giving up (a ref cycle with no object in between). */
const MAX_REF_HOPS = 32;

function resolve(map: FieldMap, node: JsonSchemaNode): JsonSchemaNode {
  let current = node;
  for (let hops = 0; hops < MAX_REF_HOPS; hops++) {
    if (typeof current !== "object" || typeof current.$ref !== "string") return current;
    const ref = current.$ref;
    if (ref === "#") current = map.root;
    else if (ref.startsWith("#/$defs/")) current = map.defs[ref.slice("#/$defs/".length)] ?? true;
    else return true; // a reference we cannot follow: accept, the schema still parses the value
  }
  return true;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);

function join(prefix: string, key: string | number): string {
  return prefix === "" ? String(key) : `${prefix}.${key}`;
}

function walk(map: FieldMap, raw: JsonSchemaNode, value: unknown, path: string, depth: number): TErrorDetail[] {
  // Bodies are at most 64 levels deep (route.ts); recursive schemas cannot loop past the value.
  if (depth > 256) return [];
  const node = resolve(map, raw);
  if (typeof node !== "object") return [];
  const branches = (node.anyOf ?? node.oneOf) as JsonSchemaNode[] | undefined;
  if (Array.isArray(branches)) return walkUnion(map, branches, value, path, depth);
  if (Array.isArray(node.allOf)) {
    // An intersection accepts the keys any of its parts declares.
    const parts = (node.allOf as JsonSchemaNode[]).map((part) => resolve(map, part));
    return walkObjectOrArray(map, mergeParts(parts), value, path, depth);
  }
  return walkObjectOrArray(map, node, value, path, depth);
}

function mergeParts(parts: JsonSchemaNode[]): { [key: string]: unknown } {
  const properties: Record<string, JsonSchemaNode> = {};
  let additional: unknown = undefined;
  let anyObject = false;
  for (const part of parts) {
    if (typeof part !== "object") return {};
    if (part.type === "object" || part.properties !== undefined) anyObject = true;
    Object.assign(properties, (part.properties ?? {}) as Record<string, JsonSchemaNode>);
    if (part.additionalProperties !== undefined && part.additionalProperties !== false) additional = part.additionalProperties;
  }
  return anyObject ? { type: "object", properties, ...(additional === undefined ? {} : { additionalProperties: additional }) } : {};
}

function walkObjectOrArray(map: FieldMap, node: { [key: string]: unknown }, value: unknown, path: string, depth: number): TErrorDetail[] {
  if (Array.isArray(value)) {
    const details: TErrorDetail[] = [];
    const prefixItems = Array.isArray(node.prefixItems) ? (node.prefixItems as JsonSchemaNode[]) : [];
    const items = node.items as JsonSchemaNode | undefined;
    value.forEach((item, i) => {
      const itemSchema = prefixItems[i] ?? items;
      if (itemSchema !== undefined) details.push(...walk(map, itemSchema, item, join(path, i), depth + 1));
    });
    return details;
  }
  if (!isPlainObject(value)) return [];
  const declaresObject = node.type === "object" || node.properties !== undefined || node.additionalProperties !== undefined;
  if (!declaresObject) return [];
  const properties = (node.properties ?? {}) as Record<string, JsonSchemaNode>;
  const additional = node.additionalProperties as JsonSchemaNode | undefined;
  const openToAnyKey = additional !== undefined && additional !== false;
  const details: TErrorDetail[] = [];
  for (const [key, inner] of Object.entries(value)) {
    const declared = Object.hasOwn(properties, key) ? properties[key] : undefined;
    if (declared !== undefined) details.push(...walk(map, declared, inner, join(path, key), depth + 1));
    else if (openToAnyKey) details.push(...walk(map, additional, inner, join(path, key), depth + 1));
    else details.push({ path: join(path, key), message: unknownFieldMessage(Object.keys(properties)) });
  }
  return details;
}

/** "unknown field; known fields: a, b" (or just the count when there are many). */
export function unknownFieldMessage(known: readonly string[]): string {
  if (known.length === 0) return "unknown field; this object takes no fields";
  if (known.length > MAX_LISTED_FIELDS) return `unknown field; check its spelling against the ${known.length} fields this object takes (the OpenAPI document lists them)`;
  return `unknown field; known fields: ${known.join(", ")}`;
}

function walkUnion(map: FieldMap, branches: JsonSchemaNode[], value: unknown, path: string, depth: number): TErrorDetail[] {
  let best: TErrorDetail[] | undefined;
  let bestScore = -Infinity;
  for (const branch of branches) {
    const resolved = resolve(map, branch);
    const score = matchScore(map, resolved, value);
    if (score < 0) continue;
    const details = walk(map, resolved, value, path, depth);
    if (details.length === 0) return [];
    // The branch whose discriminator matches wins; among equals, the one with the fewest unknowns.
    const ranked = score * 1000 - details.length;
    if (ranked > bestScore) {
      best = details;
      bestScore = ranked;
    }
  }
  // No branch even has the value's type: a type error, which the schema's parse reports.
  return best ?? [];
}

const jsonType = (value: unknown): string =>
  value === null ? "null" : Array.isArray(value) ? "array" : typeof value === "number" ? (Number.isInteger(value) ? "integer" : "number") : typeof value;

/**
 * How well `value` fits a union branch, ignoring unknown keys: -1 when its type differs, 1 more
 * for every declared property whose `const`/`enum` the value matches (a discriminator), 0 otherwise.
 */
function matchScore(map: FieldMap, node: JsonSchemaNode, value: unknown): number {
  if (typeof node !== "object") return node ? 0 : -1;
  const types = node.type === undefined ? [] : ([node.type].flat() as string[]);
  const actual = jsonType(value);
  if (types.length > 0 && !types.includes(actual) && !(actual === "integer" && types.includes("number"))) return -1;
  if (!isPlainObject(value)) return 0;
  let score = 0;
  for (const [key, property] of Object.entries((node.properties ?? {}) as Record<string, JsonSchemaNode>)) {
    const p = resolve(map, property);
    if (typeof p !== "object" || !Object.hasOwn(value, key)) continue;
    const allowed = p.const !== undefined ? [p.const] : Array.isArray(p.enum) ? (p.enum as unknown[]) : undefined;
    if (allowed === undefined) continue;
    if (!allowed.includes(value[key])) return -1;
    score++;
  }
  return score;
}
