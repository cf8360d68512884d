/**
 * What the gateway passes to the real server untouched: everything but `tools/call`. Resources,
 * prompts, completions and the logging level read or set nothing in another party's system that a
 * saga could undo, so they go straight through, with the server's own capabilities announced to the
 * client; the server's notifications (log messages, resource updates, list changes) come back to
 * every client session the gateway serves. `tools/list` is the gateway's own (the tools as
 * declared), and `tools/call` is the saga log's (gateway.ts).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CompleteRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  LoggingMessageNotificationSchema,
  PromptListChangedNotificationSchema,
  ReadResourceRequestSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type ServerCapabilities,
  type ServerNotification,
} from "@modelcontextprotocol/sdk/types.js";

export class PassThrough {
  private readonly servers = new Set<Server>();

  constructor(private readonly upstream: Client) {
    const forward = (notification: ServerNotification) => {
      for (const server of this.servers) void server.notification(notification).catch(() => undefined); // a session gone meanwhile
    };
    for (const schema of [LoggingMessageNotificationSchema, ResourceUpdatedNotificationSchema, ResourceListChangedNotificationSchema, PromptListChangedNotificationSchema]) {
      upstream.setNotificationHandler(schema, forward);
    }
  }

  /** The server's capabilities besides tools, as the gateway announces them to a client. */
  capabilities(): ServerCapabilities {
    const { resources, prompts, completions, logging } = this.upstream.getServerCapabilities() ?? {};
    return { ...(resources ? { resources } : {}), ...(prompts ? { prompts } : {}), ...(completions ? { completions } : {}), ...(logging ? { logging } : {}) };
  }

  /** Answers a client session's non-tool requests from the real server. */
  attach(server: Server): void {
    const up = this.upstream;
    const caps = this.capabilities();
    if (caps.resources) {
      server.setRequestHandler(ListResourcesRequestSchema, (r, extra) => up.listResources(r.params, { signal: extra.signal }));
      server.setRequestHandler(ListResourceTemplatesRequestSchema, (r, extra) => up.listResourceTemplates(r.params, { signal: extra.signal }));
      server.setRequestHandler(ReadResourceRequestSchema, (r, extra) => up.readResource(r.params, { signal: extra.signal }));
      if (caps.resources.subscribe) {
        server.setRequestHandler(SubscribeRequestSchema, (r, extra) => up.subscribeResource(r.params, { signal: extra.signal }));
        server.setRequestHandler(UnsubscribeRequestSchema, (r, extra) => up.unsubscribeResource(r.params, { signal: extra.signal }));
      }
    }
    if (caps.prompts) {
      server.setRequestHandler(ListPromptsRequestSchema, (r, extra) => up.listPrompts(r.params, { signal: extra.signal }));
      server.setRequestHandler(GetPromptRequestSchema, (r, extra) => up.getPrompt(r.params, { signal: extra.signal }));
    }
    if (caps.completions) server.setRequestHandler(CompleteRequestSchema, (r, extra) => up.complete(r.params, { signal: extra.signal }));
    if (caps.logging) server.setRequestHandler(SetLevelRequestSchema, (r, extra) => up.setLoggingLevel(r.params.level, { signal: extra.signal }));
    this.servers.add(server);
    const closed = server.onclose;
    server.onclose = () => {
      this.servers.delete(server);
      closed?.();
    };
  }
}
