/**
 * Undo through the gateway. An admin pairs an MCP tool with another tool of the same server as its
 * compensator in the tool table (memory `create_entities` -> `delete_entities`; a ledger's
 * `append_entry` -> `remove_entry`); the gateway then proposes the compensation with each call, and
 * its worker (started with `--worker-token`) runs it when a person unwinds the run or pulls a step back
 * from the dashboard: the compensating tool is called on the real server, and the effect is read back
 * with the tool's lookup before the compensation counts as done.
 *
 * The compensation's arguments come from what the call will really do, not only from what it asked:
 * for `create_entities` they are the names that did not exist before the call (read just before the
 * intent), since server-memory skips names it already holds and deleting those would destroy data
 * the call never made. For server-filesystem's `write_file` they are the file as it was just before
 * the intent (restored with `write_file`), for `move_file` the move back; a write
 * that would create a file cannot be undone by that server (it has no delete), so none is built and
 * the call is held for a person. A compensator with no built-in rule gets `{ key }`, the step's key.
 */
import * as z from "zod";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { defineCompensator, defineTool, HttpSagaStore, HttpTaskQueue, SagaEngine, ToolRegistry, Worker, type CompensationContext, type Json, type TransportOptions } from "@sagaboard/client";
import { traceWorkerTask } from "@sagaboard/client/tracing";
import { openNodes, pathExists, preImage, readText, type Lookup } from "./lookups";
import type { TableTool } from "./sagaboard";
import { KEY_META } from "./upstream";

type Entity = { name: string };

async function existingNames(client: Client, names: string[]): Promise<string[]> {
  return (await openNodes(client, names)).map((e) => e.name);
}

/**
 * A built-in compensation rule for one tool of a known server: the compensator (one of the server's
 * own tools) it must be paired with, how to build the compensation's arguments just before the intent
 * (null: this call cannot be undone by the server's tools, so the gate holds it for a person), and how
 * to tell that the compensation took (the effect is gone, or the start state is back).
 */
interface Rule {
  compensator: string;
  build: (client: Client, args: Record<string, unknown>) => Promise<Json | null>;
  gone: (client: Client, args: Record<string, unknown>) => Promise<boolean>;
}

const MEMORY_RULES: Record<string, Rule> = {
  create_entities: {
    compensator: "delete_entities",
    async build(client, args) {
      const names = ((args.entities as Entity[] | undefined) ?? []).map((e) => e.name);
      const before = await existingNames(client, names);
      return { entityNames: names.filter((n) => !before.includes(n)) };
    },
    async gone(client, args) {
      const names = (args.entityNames as string[] | undefined) ?? [];
      return names.length === 0 || (await existingNames(client, names)).length === 0;
    },
  },
};

/** The largest pre-image kept in a step's compensation; a bigger file's write is held for a person. */
export const MAX_PRE_IMAGE_BYTES = 256 * 1024;

/**
 * server-filesystem: a write is undone by writing back the file as it was just before the intent (its
 * pre-image, read then); a move by moving it back. The server has no delete, so a write that would
 * create a file (or overwrite one that is not plain UTF-8 text, or is larger than
 * MAX_PRE_IMAGE_BYTES) cannot be undone by it: no compensation is built and the call is held.
 * (`edit_file` has no rule: nothing can tell afterwards whether an edit landed, so it cannot be
 * reconciled and stays IRREVERSIBLE, every call held.)
 */
const FILESYSTEM_RULES: Record<string, Rule> = {
  write_file: {
    compensator: "write_file",
    async build(client, args) {
      if (typeof args.path !== "string") return null;
      const before = await preImage(client, args.path, MAX_PRE_IMAGE_BYTES);
      return before === null ? null : { path: args.path, content: before };
    },
    async gone(client, args) {
      return typeof args.path === "string" && typeof args.content === "string" && (await readText(client, args.path)) === args.content;
    },
  },
  move_file: {
    compensator: "move_file",
    async build(_client, args) {
      if (typeof args.source !== "string" || typeof args.destination !== "string") return null;
      return { source: args.destination, destination: args.source };
    },
    async gone(client, args) {
      // The compensation moves destination -> source back: done when the original is home again and the moved copy is gone.
      return typeof args.source === "string" && typeof args.destination === "string" && (await pathExists(client, args.destination)) && !(await pathExists(client, args.source));
    },
  },
};

/** Built-in rules by the name a server gives in `initialize`. */
const RULES: Record<string, Record<string, Rule>> = { "memory-server": MEMORY_RULES, "secure-filesystem-server": FILESYSTEM_RULES };

function ruleFor(serverName: string | undefined, mcpName: string): Rule | undefined {
  return serverName ? RULES[serverName]?.[mcpName] : undefined;
}

/** The compensation a call proposes, when the tool table pairs its tool with a compensator; null when it cannot be built. */
export async function proposeCompensation(input: {
  client: Client;
  serverName: string | undefined;
  mcpName: string;
  row: TableTool & { compensator?: string | null };
  args: Record<string, unknown>;
}): Promise<{ tool: string; args: Json } | null> {
  const compensator = input.row.compensator;
  if (!compensator) return null;
  const rule = ruleFor(input.serverName, input.mcpName);
  if (rule && compensator.endsWith(`.${rule.compensator}`)) {
    const args = await rule.build(input.client, input.args);
    return args === null ? null : { tool: compensator, args };
  }
  return { tool: compensator, args: {} };
}

/** What the worker needs to know of the gateway. */
export interface UndoWorkerOptions {
  sagaboard: TransportOptions;
  client: Client;
  serverName: string | undefined;
  tools: Tool[];
  namespace: string;
  tableName: (mcpName: string) => string;
  lookups: Record<string, Lookup>;
  workerId: string;
}

/**
 * The worker that runs compensations (and the lookups of an unwind) for the gateway's tools on the
 * real server. Each compensator is one of the server's own tools, called with the compensation's
 * arguments (or `{ key }`) and its compensation key in `_meta`; done only when the effect is gone.
 */
export function startUndoWorker(options: UndoWorkerOptions): Worker {
  const { client } = options;
  const byTableName = new Map(options.tools.map((t) => [options.tableName(t.name), t]));
  const lookupOf = (tableName: string) => {
    const tool = byTableName.get(tableName);
    return tool ? options.lookups[tool.name] : undefined;
  };

  const targetGone = async (args: Record<string, unknown>, ctx: CompensationContext): Promise<boolean> => {
    const target = byTableName.get(ctx.target.tool);
    const rule = target ? ruleFor(options.serverName, target.name) : undefined;
    if (rule) return rule.gone(client, args);
    const lookup = lookupOf(ctx.target.tool);
    if (!lookup) return false; // no way to read the server back: requested is not confirmed, a person checks
    const seen = await lookup({ client, stepKey: ctx.target.stepKey, args: ctx.target.args as Record<string, unknown> });
    return !seen.found;
  };

  const compensators = options.tools.map((tool) =>
    defineCompensator({
      name: options.tableName(tool.name),
      args: z.record(z.string(), z.unknown()),
      async run(args, ctx) {
        const sent = Object.keys(args).length > 0 ? args : { key: ctx.target.stepKey };
        const answer = await client.callTool({ name: tool.name, arguments: sent, _meta: { [KEY_META]: ctx.compensationKey } });
        if (answer.isError) throw new Error(`${tool.name} refused the compensation: ${JSON.stringify(answer.content).slice(0, 300)}`);
        return { externalRef: null };
      },
      async verify(args, ctx) {
        return (await targetGone(args, ctx)) ? { done: true } : { done: false, remaining: { tool: ctx.target.tool, stepKey: ctx.target.stepKey } };
      },
    }),
  );
  // Tools with a lookup, so an unwind can settle an unknown step first; they are never called from here.
  const tools = options.tools
    .filter((tool) => options.lookups[tool.name])
    .map((tool) =>
      defineTool({
        name: options.tableName(tool.name),
        class: "IRREVERSIBLE",
        args: z.record(z.string(), z.unknown()),
        call: async () => {
          throw new Error(`The gateway's worker does not call ${tool.name}; the client does, through the gateway.`);
        },
        lookup: async (stepKey, args) => {
          const seen = await options.lookups[tool.name]!({ client, stepKey, args });
          return seen.found ? { externalRef: null, result: seen.result as Json } : null;
        },
        correction: () => null,
      }),
    );
  const registry = new ToolRegistry(tools, compensators);
  const engine = new SagaEngine({ store: new HttpSagaStore(options.sagaboard), registry });
  const worker = new Worker({
    queue: new HttpTaskQueue(options.sagaboard),
    engine,
    workerId: options.workerId,
    tools: options.tools.map((t) => options.tableName(t.name)),
    log: (line) => process.stderr.write(`sagaboard-mcp-gateway worker: ${line}\n`),
    traceTask: traceWorkerTask,
  });
  worker.start();
  return worker;
}
