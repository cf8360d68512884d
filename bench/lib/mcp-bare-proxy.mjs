/* global process, URL */
/**
 * The bench's floor for any MCP gateway: a bare proxy process built on the same SDK as the gateway
 * (streamable HTTP towards the client, one session per client; an SDK client over streamable HTTP
 * towards the server) that forwards `tools/list` and `tools/call` and does nothing else: no log, no
 * table, no Sagaboard. What it adds to a direct call is the cost of the second process hop itself.
 * PORT: where it listens; UPSTREAM: the server's URL.
 */
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const upstream = new Client({ name: "bare-proxy", version: "1.0.0" });
await upstream.connect(new StreamableHTTPClientTransport(new URL(process.env.UPSTREAM)));
const { tools } = await upstream.listTools();

const sessions = new Map();
const http = createServer(async (req, res) => {
  const id = req.headers["mcp-session-id"];
  let transport = typeof id === "string" ? sessions.get(id) : undefined;
  if (!transport) {
    const created = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), enableJsonResponse: true, onsessioninitialized: (sid) => void sessions.set(sid, created) });
    const server = new Server({ name: "bare-proxy", version: "1.0.0" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
    server.setRequestHandler(CallToolRequestSchema, (request, extra) => upstream.callTool(request.params, undefined, { signal: extra.signal }));
    await server.connect(created);
    transport = created;
  }
  await transport.handleRequest(req, res);
});
http.listen(Number(process.env.PORT), "127.0.0.1", () => process.stdout.write(`listening ${process.env.PORT}\n`));
