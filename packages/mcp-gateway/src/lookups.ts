/**
 * How the gateway looks an effect up on the real server when its outcome is unknown (a crash between
 * forwarding and recording, a cancelled or timed-out call whose late answer never came). A lookup
 * answers found (with what the server holds now), absent, or null when this tool has no way to look.
 *
 * Two kinds:
 * - built in for `@modelcontextprotocol/server-memory`: its writes are named by their arguments, so
 *   `open_nodes` tells whether the entities or observations exist;
 * - built in for `@modelcontextprotocol/server-filesystem`: `write_file` is found when the file's
 *   text is what it wrote (`read_text_file`), `move_file` when the destination exists and the source
 *   does not (`get_file_info`);
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

/** server-filesystem's text of a file, or null when it cannot be read (absent, outside the sandbox). */
export async function readText(client: Client, path: string): Promise<string | null> {
  const answer = await client.callTool({ name: "read_text_file", arguments: { path } });
  if (answer.isError) return null;
  const structured = answer.structuredContent as { content?: unknown } | undefined;
  if (typeof structured?.content === "string") return structured.content;
  return (answer.content as { type: string; text?: string }[] | undefined)?.find((c) => c.type === "text")?.text ?? null;
}

/** server-filesystem's `get_file_info` as fields ("size: 12" lines), or null when the path does not exist. */
async function fileInfo(client: Client, path: string): Promise<Record<string, string> | null> {
  const answer = await client.callTool({ name: "get_file_info", arguments: { path } });
  if (answer.isError) return null;
  const text = (answer.content as { type: string; text?: string }[] | undefined)?.find((c) => c.type === "text")?.text ?? "";
  return Object.fromEntries(text.split("\n").map((line) => [line.slice(0, line.indexOf(":")).trim(), line.slice(line.indexOf(":") + 1).trim()]));
}

/** Whether a path exists in server-filesystem's sandbox. */
export async function pathExists(client: Client, path: string): Promise<boolean> {
  return (await fileInfo(client, path)) !== null;
}

/**
 * A file's exact bytes as text, when writing that text back restores them: it exists, is a regular
 * file of at most `maxBytes`, and reads back as UTF-8 of exactly its size (a binary file or another
 * encoding would not survive the round trip). Null otherwise.
 */
export async function preImage(client: Client, path: string, maxBytes: number): Promise<string | null> {
  const info = await fileInfo(client, path);
  if (!info || info.isFile !== "true") return null;
  const size = Number(info.size);
  if (!Number.isFinite(size) || size > maxBytes) return null;
  const text = await readText(client, path);
  return text !== null && Buffer.byteLength(text, "utf8") === size ? text : null;
}

/** server-filesystem: a write is found when the file holds what it wrote; a move when the destination exists and the source does not. */
const FILESYSTEM: Record<string, Lookup> = {
  async write_file({ client, args }) {
    if (typeof args.path !== "string" || typeof args.content !== "string") return { found: false };
    if ((await readText(client, args.path)) !== args.content) return { found: false };
    const text = `Successfully wrote to ${args.path}`;
    return { found: true, result: { content: [{ type: "text", text }], structuredContent: { content: text } } };
  },
  async move_file({ client, args }) {
    if (typeof args.source !== "string" || typeof args.destination !== "string") return { found: false };
    if (!(await pathExists(client, args.destination)) || (await pathExists(client, args.source))) return { found: false };
    const text = `Successfully moved ${args.source} to ${args.destination}`;
    return { found: true, result: { content: [{ type: "text", text }], structuredContent: { content: text } } };
  },
};

/** The built-in lookups for a server, by the name it gives in `initialize`. */
export function builtInLookups(serverName: string | undefined): Record<string, Lookup> {
  return serverName === "memory-server" ? MEMORY : serverName === "secure-filesystem-server" ? FILESYSTEM : {};
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
