/**
 * Who may use the gateway over HTTP. Only its own clients: every request carries a bearer token the
 * operator gave that client (a file of NAME:SECRET lines; the gateway writes one with a fresh secret
 * when there is none), comes from this machine's browser origins or ones the operator allowed (the
 * MCP transport spec says servers must validate Origin: a web page elsewhere must not drive a local
 * gateway), and names a loopback Host (a DNS-rebinding page reaches 127.0.0.1 under its own name).
 * A refusal is an HTTP status with a JSON-RPC error a client can show; nothing is forwarded or logged.
 * Over stdio there is no credential: the parent process is the client.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { IncomingMessage } from "node:http";

/** The largest request body the gateway reads (1 MiB). */
export const MAX_BODY_BYTES = 1024 * 1024;

/** The clients the gateway serves: the sha256 of each secret, and its name. */
export interface ClientTokens {
  /** By the hex sha256 of the secret. */
  byHash: Map<string, string>;
  /** The file they were read from. */
  file: string;
  /** The gateway wrote the file (with one new secret) because there was none. */
  created: boolean;
  /** Something a person should fix (the file readable by others). */
  warnings: string[];
}

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

/**
 * Reads the clients' tokens from `file` (one NAME:SECRET a line; a line with no name is the client
 * "default"; blank lines and # comments are skipped), writing one with a fresh secret (mode 600)
 * when it does not exist.
 */
export function loadClientTokens(file: string): ClientTokens {
  const warnings: string[] = [];
  let created = false;
  if (!existsSync(file)) {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(file, `# Bearer tokens of the MCP clients this gateway serves, one NAME:SECRET a line.\ndefault:${randomBytes(32).toString("base64url")}\n`, { mode: 0o600 });
    chmodSync(file, 0o600);
    created = true;
  } else if ((statSync(file).mode & 0o077) !== 0) {
    warnings.push(`${file} can be read by other users of this machine; chmod 600 it.`);
  }
  const byHash = new Map<string, string>();
  for (const raw of readFileSync(file, "utf8").split("\n")) {
    const line = raw.trim();
    if (!line || line.startsWith("#")) continue;
    const colon = line.indexOf(":");
    const [name, secret] = colon > 0 ? [line.slice(0, colon).trim(), line.slice(colon + 1).trim()] : ["default", line];
    if (secret.length < 16) {
      warnings.push(`${file}: the token of client "${name}" is shorter than 16 characters and is ignored.`);
      continue;
    }
    byHash.set(sha256(secret), name);
  }
  if (byHash.size === 0) throw new Error(`${file} names no client token (NAME:SECRET, at least 16 characters); no client could use the gateway.`);
  return { byHash, file, created, warnings };
}

/** Where requests may come from. */
export interface RequestPolicy {
  /** The clients' tokens. */
  tokens: ClientTokens;
  /** The port the gateway listens on (a loopback Host must name it). */
  port: number;
  /** Browser origins allowed besides this machine's (`https://app.example.com`). */
  allowOrigins: readonly string[];
  /** Host headers allowed besides localhost, 127.0.0.1 and [::1] (a name, or name:port). */
  allowHosts: readonly string[];
}

/** A request the gateway serves, and which client sent it; or why it is refused. */
export type Admission = { ok: true; client: string } | { ok: false; status: 401 | 403 | 413; message: string };

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

function hostAllowed(host: string | undefined, policy: RequestPolicy): boolean {
  if (!host) return false;
  const h = host.trim().toLowerCase();
  if (policy.allowHosts.some((a) => a.toLowerCase() === h || a.toLowerCase() === h.replace(/:\d+$/, ""))) return true;
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(h);
  if (!match) return false;
  return LOOPBACK.has(match[1] as string) && (match[2] === undefined || Number(match[2]) === policy.port);
}

function originAllowed(origin: string, policy: RequestPolicy): boolean {
  if (policy.allowOrigins.includes(origin)) return true;
  if (!URL.canParse(origin)) return false; // "null" (a sandboxed page, a file) included
  const url = new URL(origin);
  return (url.protocol === "http:" || url.protocol === "https:") && LOOPBACK.has(url.hostname);
}

function tokenOf(header: string | undefined): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return match?.[1] ?? null;
}

/** Decides whether the gateway serves a request, before reading its body. */
export function admit(req: Pick<IncomingMessage, "headers">, policy: RequestPolicy): Admission {
  if (!hostAllowed(req.headers.host, policy)) {
    return { ok: false, status: 403, message: `Host "${req.headers.host ?? ""}" is not this gateway's: it serves localhost:${policy.port} (and hosts the operator allows with --allow-host).` };
  }
  const origin = req.headers.origin;
  if (origin !== undefined && !originAllowed(origin, policy)) {
    return { ok: false, status: 403, message: `Origin "${origin}" may not use this gateway: it serves this machine's pages (and origins the operator allows with --allow-origin).` };
  }
  const secret = tokenOf(req.headers.authorization);
  if (!secret) return { ok: false, status: 401, message: `Send "Authorization: Bearer <token>" with a client token of this gateway (its operator has them in ${policy.tokens.file}).` };
  const hash = sha256(secret);
  let client: string | undefined;
  for (const [known, name] of policy.tokens.byHash) {
    if (timingSafeEqual(Buffer.from(known, "hex"), Buffer.from(hash, "hex"))) client = name;
  }
  if (!client) return { ok: false, status: 401, message: "This client token is not one of this gateway's; ask its operator for one." };
  const length = Number(req.headers["content-length"] ?? 0);
  if (Number.isFinite(length) && length > MAX_BODY_BYTES) return { ok: false, status: 413, message: `The request body is ${length} bytes; the gateway reads at most ${MAX_BODY_BYTES}.` };
  return { ok: true, client };
}

/** The JSON-RPC error body of a refusal (`id` null: the request was not read). */
export function refusalBody(message: string, status: number): string {
  return JSON.stringify({ jsonrpc: "2.0", error: { code: status === 401 ? -32001 : status === 413 ? -32600 : -32003, message }, id: null });
}
