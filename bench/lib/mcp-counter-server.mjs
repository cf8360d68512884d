/* global process, Buffer */
/**
 * The bench's MCP server, over streamable HTTP on 127.0.0.1:PORT/mcp (stateless: a fresh server per
 * request, as the SDK's stateless example does): `write` counts an effect per key in memory (no
 * dedupe), `find` answers whether a key's effect exists, `read` returns the count. Kept trivial so
 * the bench measures the path around the call, not the call.
 */
import { createServer } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import * as z from "zod";

const effects = new Map();
let total = 0;
/** Every call the server ran, by tool (the bench divides the logged writes' share by their number). */
const calls = { write: 0, find: 0, undo: 0, read: 0 };

function server() {
  const s = new McpServer({ name: "counter-server", version: "1.0.0" });
  s.registerTool("write", { description: "Counts an effect.", inputSchema: { n: z.number().int() } }, async ({ n }, extra) => {
    calls.write++;
    const key = extra._meta?.["dev.sagaboard/idempotencyKey"] ?? `anon-${total}`;
    effects.set(key, (effects.get(key) ?? 0) + 1);
    total++;
    return { content: [{ type: "text", text: `wrote ${n}` }], structuredContent: { n, total } };
  });
  s.registerTool("find", { description: "Whether a key's effect exists.", inputSchema: { key: z.string() } }, async ({ key }) => {
    calls.find++;
    return { content: [{ type: "text", text: effects.has(key) ? "found" : "absent" }], structuredContent: { found: effects.has(key) } };
  });
  s.registerTool("undo", { description: "Undoes a key's effect.", inputSchema: { key: z.string() } }, async ({ key }) => {
    calls.undo++;
    effects.delete(key);
    return { content: [{ type: "text", text: "undone" }] };
  });
  s.registerTool("read", { description: "How many effects.", inputSchema: {}, annotations: { readOnlyHint: true } }, async () => {
    calls.read++;
    return { content: [{ type: "text", text: String(total) }], structuredContent: { total, duplicates: [...effects.values()].filter((c) => c > 1).length, calls: { ...calls } } };
  });
  return s;
}

const http = createServer(async (req, res) => {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  const s = server();
  res.on("close", () => {
    void transport.close();
    void s.close();
  });
  await s.connect(transport);
  await transport.handleRequest(req, res, body);
});
http.listen(Number(process.env.PORT), "127.0.0.1", () => process.stdout.write(`listening ${process.env.PORT}\n`));
