/**
 * The socket's peer address, which Next.js does not give route handlers (it only fills
 * X-Forwarded-For from the socket when the client sent none, so a client picks its own). At start
 * (instrumentation.ts) every request the Node HTTP server receives is stamped with its socket's peer
 * in a header, overwriting whatever the client sent under that name; the stamp carries a random
 * per-process token, so a header a client wrote is never mistaken for one (e.g. on a request that
 * arrived before the stamping began, or under a server that does not stamp).
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";

/** The header the stamp rides in: `<token> <peer address>`. */
export const PEER_HEADER = "x-sagaboard-peer";

const STATE = Symbol.for("sagaboard.peer-stamp");
type StampState = { token: string };
type WithState = typeof globalThis & { [STATE]?: StampState };

function state(): StampState | undefined {
  return (globalThis as WithState)[STATE];
}

/**
 * Starts stamping: patches the Node HTTP(S) servers' event emitter so each `request` gets the
 * header before any handler sees it. Idempotent; call it once per process at start.
 */
export async function installPeerStamp(): Promise<void> {
  if (state()) return;
  const token = randomBytes(16).toString("hex");
  (globalThis as WithState)[STATE] = { token };
  const [http, https] = await Promise.all([import("node:http"), import("node:https")]);
  for (const Server of [http.Server, https.Server]) {
    const emit = Server.prototype.emit as (this: unknown, event: string | symbol, ...args: unknown[]) => boolean;
    Server.prototype.emit = function stampedEmit(this: unknown, event: string | symbol, ...args: unknown[]): boolean {
      if (event === "request") {
        const request = args[0] as IncomingMessage;
        request.headers[PEER_HEADER] = `${token} ${request.socket?.remoteAddress ?? ""}`;
      }
      return emit.call(this, event, ...args);
    } as typeof Server.prototype.emit;
  }
}

/** The socket's peer the stamp names, or null when the request carries no genuine stamp. */
export function socketAddressOf(headers: Headers): string | null {
  const current = state();
  const value = headers.get(PEER_HEADER);
  if (!current || !value) return null;
  const [token, address] = value.split(" ");
  return token === current.token && address ? address : null;
}
