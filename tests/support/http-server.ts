/**
 * Serves the app's route handlers (API and simulated systems) on a local port with node:http, so
 * tests can run agents and workers as real child processes (and SIGKILL them) without a Next build.
 * The handlers are the same modules Next.js serves.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { routeFetch } from "./api-router";

async function toRequest(req: IncomingMessage, base: string): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = chunks.length ? Buffer.concat(chunks) : undefined;
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
  return new Request(new URL(req.url ?? "/", base), { method: req.method, headers, body: req.method === "GET" || req.method === "HEAD" ? undefined : body });
}

async function send(res: ServerResponse, response: Response): Promise<void> {
  res.statusCode = response.status;
  response.headers.forEach((value, key) => res.setHeader(key, value));
  res.end(Buffer.from(await response.arrayBuffer()));
}

/** A running test server. */
export interface TestServer {
  /** `http://127.0.0.1:PORT` */
  url: string;
  /** Stops it. */
  close: () => Promise<void>;
}

export async function startTestServer(): Promise<TestServer> {
  const server = createServer((req, res) => {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    toRequest(req, base)
      .then((request) => routeFetch(request))
      .then((response) => send(res, response))
      .catch((e: unknown) => {
        res.statusCode = 500;
        res.end(String(e));
      });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
