/**
 * The real server's tools, watched live. A server may change its tools while the gateway runs (and
 * say so with `notifications/tools/list_changed`, or not): the gateway lists them again on that
 * notification and every `relistMs`, hashes every definition, declares the list again (Sagaboard
 * marks a changed definition unreviewed, so its calls are held until an admin reviews it), and tells
 * its own clients `list_changed`. Each call is checked against the hash the tool table reviewed
 * (gateway.ts), so no call runs under a definition nobody reviewed, whichever came first.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { ToolListChangedNotificationSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";
import type { TDeclarationResult, TToolManifest } from "@sagaboard/client";
import { definitionHash } from "@sagaboard/client/wire";
import { localName, type ToolSource } from "./gateway";
import type { Lookup } from "./lookups";

/** The hints an MCP server gives of a tool, as a manifest carries them (unverified). */
function hintsOf(tool: Tool): TToolManifest["tools"][number]["hints"] {
  const a = tool.annotations;
  if (!a) return undefined;
  const hints = { readOnly: a.readOnlyHint, destructive: a.destructiveHint, idempotent: a.idempotentHint, openWorld: a.openWorldHint };
  const set = Object.fromEntries(Object.entries(hints).filter(([, v]) => typeof v === "boolean"));
  return Object.keys(set).length > 0 ? set : undefined;
}

/**
 * The server's hints as the sentence an admin reads on the tool page ("Its server says, unverified:
 * it only reads; it does not destroy anything."), never the annotations' JSON.
 */
export function hintsInWords(annotations: Tool["annotations"]): string {
  if (!annotations) return "";
  const said: string[] = [];
  if (typeof annotations.title === "string" && annotations.title) said.push(`it is called “${annotations.title}”`);
  if (annotations.readOnlyHint === true) said.push("it only reads");
  if (annotations.readOnlyHint === false) said.push("it changes things");
  if (annotations.destructiveHint === true) said.push("it may destroy or overwrite data");
  if (annotations.destructiveHint === false) said.push("it does not destroy anything");
  if (annotations.idempotentHint === true) said.push("calling it twice does no more than once");
  if (annotations.idempotentHint === false) said.push("calling it twice may do it twice");
  if (annotations.openWorldHint === true) said.push("it reaches systems outside its server");
  if (annotations.openWorldHint === false) said.push("it stays inside its server");
  return said.length > 0 ? ` Its server says (unverified): ${said.join("; ")}.` : "";
}

/** What the gateway suggests for an MCP tool: the strictest class until an admin reviews it. */
export function manifestFor(tools: Tool[], owner: string, lookups: Record<string, Lookup>): TToolManifest {
  return {
    tools: tools.map((tool) => {
      const hints = hintsInWords(tool.annotations);
      const hinted = hintsOf(tool);
      return {
        name: localName(tool.name),
        class: "IRREVERSIBLE",
        description: `MCP tool ${tool.name}: ${tool.description ?? "no description"}`.slice(0, 480 - hints.length) + hints,
        argsSchema: tool.inputSchema as Record<string, unknown>,
        lookup: tool.name in lookups,
        owner,
        correction: {
          subject: `About an action an assistant took (${tool.name})`,
          body: `An automated assistant ran ${tool.name} on your behalf, and it should not have. Please disregard its effect; we are putting it right and will follow up.`,
        },
        ...(hinted ? { hints: hinted } : {}),
      };
    }),
    // Each tool may also answer another as its compensator: an admin pairs them in the tool table.
    compensators: tools.map((tool) => ({
      name: localName(tool.name),
      description: `MCP tool ${tool.name}, as a compensating call`.slice(0, 480),
      argsSchema: tool.inputSchema as Record<string, unknown>,
    })),
  };
}

/** What the catalog needs: the real server, where to declare, and how often to look without being told. */
export interface ToolWatchOptions {
  client: Client;
  owner: string;
  lookups: Record<string, Lookup>;
  declare: (manifest: TToolManifest) => Promise<TDeclarationResult>;
  /** Re-list every N ms when the server does not notify (0: only on its notification). */
  relistMs: number;
  /** Told each time the list changed (for the gateway's log). */
  onChange?: (changed: string[]) => void;
}

/** The server's tools as last listed and declared, each with its definition's hash. */
export class ToolCatalog implements ToolSource {
  private current: Tool[] = [];
  private hashes = new Map<string, string>();
  private readonly servers = new Set<Server>();
  private refreshing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** The namespace the declaration landed in. */
  namespace = "";
  /** Names of the tools still waiting for an admin's review after the last declaration. */
  waiting: string[] = [];

  constructor(private readonly o: ToolWatchOptions) {}

  /** Lists and declares once, then watches: the server's notification and a timer. */
  async start(): Promise<void> {
    await this.refresh();
    this.o.client.setNotificationHandler(ToolListChangedNotificationSchema, () => void this.refresh().catch((e: Error) => process.stderr.write(`sagaboard-mcp-gateway: re-listing the server's tools failed: ${e.message}\n`)));
    if (this.o.relistMs > 0) {
      this.timer = setInterval(() => void this.refresh().catch(() => undefined), this.o.relistMs);
      this.timer.unref();
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** The tools as last listed. */
  tools(): Tool[] {
    return this.current;
  }

  /** A tool by its MCP name, as last listed. */
  tool(name: string): Tool | undefined {
    return this.current.find((t) => t.name === name);
  }

  /** The hash of a tool's definition as last listed (what the table must have reviewed for a call to run). */
  hashOf(name: string): string | undefined {
    return this.hashes.get(name);
  }

  /** A client session that is told when the list changes. */
  attach(server: Server): void {
    this.servers.add(server);
    const closed = server.onclose;
    server.onclose = () => {
      this.servers.delete(server);
      closed?.();
    };
  }

  /**
   * Lists the server's tools again and, when any definition changed (or a tool came or went),
   * declares them and tells every client session. Concurrent callers share one refresh.
   */
  refresh(): Promise<void> {
    this.refreshing ??= this.relist().finally(() => (this.refreshing = null));
    return this.refreshing;
  }

  private async relist(): Promise<void> {
    const { tools } = await this.o.client.listTools();
    const manifest = manifestFor(tools, this.o.owner, this.o.lookups);
    const hashes = new Map(tools.map((t, i) => [t.name, definitionHash(manifest.tools[i] ?? {})] as const));
    const changed = [...new Set([...hashes.keys(), ...this.hashes.keys()])].filter((name) => hashes.get(name) !== this.hashes.get(name));
    if (changed.length === 0 && this.namespace) return;
    // Declared before the new definitions are used: from here on a changed tool is unreviewed in the table.
    const declared = await this.o.declare(manifest);
    this.namespace = declared.namespace;
    this.waiting = declared.tools.filter((t) => t.status === "UNREVIEWED").map((t) => t.name);
    const first = this.hashes.size === 0;
    this.current = tools;
    this.hashes = hashes;
    if (!first) {
      this.o.onChange?.(changed);
      for (const server of this.servers) void server.sendToolListChanged().catch(() => undefined);
    }
  }
}

/** A fixed list of tools as a ToolSource (a test's fake server, or a list the caller watches itself). */
export function staticTools(tools: Tool[], owner = "mcp", lookups: Record<string, Lookup> = {}): ToolSource {
  const manifest = manifestFor(tools, owner, lookups);
  const hashes = new Map(tools.map((t, i) => [t.name, definitionHash(manifest.tools[i] ?? {})] as const));
  return { tool: (name) => tools.find((t) => t.name === name), tools: () => tools, hashOf: (name) => hashes.get(name), refresh: async () => undefined };
}
