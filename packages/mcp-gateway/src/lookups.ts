/**
 * How the gateway looks an effect up on the real server when its outcome is unknown (a crash between
 * forwarding and recording, a cancelled or timed-out call whose late answer never came). A lookup
 * answers found (with what the server holds now), absent, or null when this tool has no way to look.
 *
 * Two kinds:
 * - built in for `@modelcontextprotocol/server-memory`: its writes are named by their arguments, so
 *   `open_nodes` tells whether the entities or observations exist;
 * - by key, for servers that read `_meta["dev.sagaboard/idempotencyKey"]`: `--lookup-by-key
 *   append_entry=find_entry` calls `find_entry({ key })`, whose structured answer says `found`.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";

/** What a lookup saw. */
export type LookupAnswer = { found: true; result: unknown } | { found: false };

/** Looks one step's effect up on the real server. */
export type Lookup = (input: { client: Client; stepKey: string; args: Record<string, unknown> }) => Promise<LookupAnswer>;

type Entity = { name: string; entityType?: string; observations?: string[] };

/** server-memory's entities of these names that exist now. */
export async function openNodes(client: Client, names: string[]): Promise<Entity[]> {
  const answer = await client.callTool({ name: "open_nodes", arguments: { names } });
  if (answer.isError) throw new Error(`open_nodes failed: ${JSON.stringify(answer.content).slice(0, 200)}`);
  const structured = answer.structuredContent as { entities?: Entity[] } | undefined;
  if (structured?.entities) return structured.entities;
  const text = (answer.content as { type: string; text?: string }[] | undefined)?.find((c) => c.type === "text")?.text ?? "{}";
  return ((JSON.parse(text) as { entities?: Entity[] }).entities ?? []) as Entity[];
}

/** server-memory: a write is found when what it wrote is in the graph. */
const MEMORY: Record<string, Lookup> = {
  async create_entities({ client, args }) {
    const wanted = ((args.entities as Entity[] | undefined) ?? []).map((e) => e.name);
    const present = await openNodes(client, wanted);
    const all = wanted.every((n) => present.some((p) => p.name === n));
    return all ? { found: true, result: { content: [{ type: "text", text: JSON.stringify(present, null, 2) }], structuredContent: { entities: present } } } : { found: false };
  },
  async add_observations({ client, args }) {
    const wanted = (args.observations as { entityName: string; contents: string[] }[] | undefined) ?? [];
    const present = await openNodes(client, wanted.map((w) => w.entityName));
    const all = wanted.every((w) => {
      const entity = present.find((p) => p.name === w.entityName);
      return entity !== undefined && w.contents.every((c) => entity.observations?.includes(c));
    });
    const result = wanted.map((w) => ({ entityName: w.entityName, addedObservations: w.contents }));
    return all ? { found: true, result: { content: [{ type: "text", text: JSON.stringify(result, null, 2) }], structuredContent: { results: result } } } : { found: false };
  },
};

/** The built-in lookups for a server, by the name it gives in `initialize`. */
export function builtInLookups(serverName: string | undefined): Record<string, Lookup> {
  return serverName === "memory-server" ? MEMORY : {};
}

/** A lookup through the server's own key-lookup tool: `lookupTool({ key })` answers `{ found, result? }`. */
export function lookupByKey(lookupTool: string): Lookup {
  return async ({ client, stepKey }) => {
    const answer = await client.callTool({ name: lookupTool, arguments: { key: stepKey } });
    if (answer.isError) throw new Error(`${lookupTool} failed: ${JSON.stringify(answer.content).slice(0, 200)}`);
    const structured = answer.structuredContent as { found?: boolean; result?: unknown } | undefined;
    if (typeof structured?.found !== "boolean") throw new Error(`${lookupTool} did not answer { found: boolean } in its structured content.`);
    return structured.found ? { found: true, result: structured.result ?? answer } : { found: false };
  };
}
