/**
 * A small TCP proxy for the fault suites (toxiproxy is not installable here): it sits in front of a
 * server (the shared PostgreSQL at 127.0.0.1:5432, or a test HTTP server) and the suite makes the
 * link between them fail, without touching the server itself:
 *
 * - `cut()`: every open connection is reset and new ones are refused (reset on accept) until
 *   `restore()`: the database or the server went away;
 * - `partition()`: connections stay open but nothing passes either way, the bytes held until
 *   `heal()` delivers them late (a network partition; what was sent in it arrives afterwards);
 * - `delay(ms, "answers")`: every chunk (or only the server's) waits `ms` before it is passed on (a
 *   slow link, or a slow server);
 * - `armOnce(rule)`: the next client chunk containing `match` triggers one fault at that exact point
 *   of the conversation: `cut-before` (reset before the chunk reaches the server: the write never
 *   happened), `cut-after` (the chunk reaches the server, and when the server answers, the answer is
 *   swallowed and every connection reset: the write ran, nobody was told), `drop-answer` (the same
 *   for that one connection only), `hold-answer` (the answer is held `holdMs`, past the
 *   client's timeout, then passed on to whoever still listens).
 *
 * A chunk boundary may split `match`: the last bytes of each direction are kept and searched with
 * the next chunk, so a match is found wherever the stream is cut.
 */
import net from "node:net";

/** One armed fault (see the file comment). */
export interface ProxyRule {
  /** Bytes of a client chunk (an SQL parameter, an HTTP request line) that trigger it. */
  match: string;
  /** What happens then. */
  action: "cut-before" | "cut-after" | "drop-answer" | "hold-answer";
  /** For `cut-before` and `cut-after`: how long new connections stay refused after the cut (default: until `restore()`). */
  downMs?: number;
  /** For `hold-answer`: how long the answer is held. */
  holdMs?: number;
}

/** A running proxy. */
export interface TcpProxy {
  /** The port it listens on (127.0.0.1). */
  port: number;
  /** Resets every connection and refuses new ones until `restore()`. */
  cut(): void;
  /** Accepts connections again. */
  restore(): void;
  /** Stops passing bytes either way (held, not lost) until `heal()`. */
  partition(): void;
  /** Delivers what the partition held and passes bytes again. */
  heal(): void;
  /** Delays every chunk (`both`, the default) or only the server's (`answers`) by `ms` from now on (0: no delay). */
  delay(ms: number, which?: "both" | "answers"): void;
  /** Arms one fault for the next client chunk containing `rule.match`; resolves when it fired. */
  armOnce(rule: ProxyRule): Promise<void>;
  /** Whether connections are being refused. */
  readonly isCut: boolean;
  /** Connections accepted, and connections reset by a fault, since the start. */
  readonly stats: { accepted: number; reset: number; fired: number };
  /** Closes the proxy and every connection. */
  close(): Promise<void>;
}

interface Pair {
  client: net.Socket;
  server: net.Socket;
  /** Set when a client chunk matched a rule acting on the answer. */
  onAnswer: ProxyRule | null;
  tailUp: string;
}

/** Starts a proxy on a free port of 127.0.0.1 that forwards to `target`. */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<Pair>();
  const held: (() => void)[] = [];
  const armed: { rule: ProxyRule; fired: () => void }[] = [];
  const stats = { accepted: 0, reset: 0, fired: 0 };
  let cut = false;
  let partitioned = false;
  let delayUpMs = 0;
  let delayDownMs = 0;
  let restoreTimer: ReturnType<typeof setTimeout> | null = null;

  const reset = (pair: Pair) => {
    if (pairs.delete(pair)) stats.reset++;
    pair.client.resetAndDestroy();
    pair.server.resetAndDestroy();
  };
  const cutAll = () => {
    cut = true;
    for (const pair of [...pairs]) reset(pair);
  };

  /** Passes `chunk` to `to`, after the delay and the partition, in order. */
  const chains = new WeakMap<net.Socket, Promise<void>>();
  const pass = (to: net.Socket, chunk: Buffer, delayMs: number) => {
    const previous = chains.get(to) ?? Promise.resolve();
    const next = previous.then(async () => {
      if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
      if (partitioned) await new Promise<void>((r) => held.push(r));
      if (!to.destroyed) to.write(chunk);
    });
    chains.set(to, next);
  };

  const server = net.createServer((client) => {
    stats.accepted++;
    if (cut) {
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect(target.port, target.host);
    const pair: Pair = { client, server: upstream, onAnswer: null, tailUp: "" };
    pairs.add(pair);
    const drop = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
    client.on("data", (chunk: Buffer) => {
      const text = chunk.toString("latin1");
      const haystack = pair.tailUp + text;
      pair.tailUp = haystack.slice(-256);
      const hit = armed.findIndex((a) => haystack.includes(a.rule.match));
      if (hit < 0) return pass(upstream, chunk, delayUpMs);
      const [{ rule, fired }] = armed.splice(hit, 1) as [{ rule: ProxyRule; fired: () => void }];
      stats.fired++;
      fired();
      if (rule.action === "cut-before") {
        cutAll();
        if (rule.downMs !== undefined) restoreTimer = setTimeout(() => (cut = false), rule.downMs);
        return;
      }
      pass(upstream, chunk, delayUpMs);
      pair.onAnswer = rule;
    });
    upstream.on("data", (chunk: Buffer) => {
      const rule = pair.onAnswer;
      // The server answered, so it ran the statement (a single statement has committed by then):
      // swallow the answer and reset every connection.
      if (rule?.action === "cut-after") {
        cutAll();
        if (rule.downMs !== undefined) restoreTimer = setTimeout(() => (cut = false), rule.downMs);
        return;
      }
      if (rule?.action === "drop-answer") return reset(pair);
      if (rule?.action === "hold-answer") {
        // This answer and whatever follows it on the connection wait, in order.
        pair.onAnswer = null;
        const previous = chains.get(client) ?? Promise.resolve();
        chains.set(client, previous.then(() => new Promise((r) => setTimeout(r, rule.holdMs ?? 0))));
      }
      pass(client, chunk, delayDownMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;

  return {
    port,
    cut: cutAll,
    restore: () => {
      if (restoreTimer) clearTimeout(restoreTimer);
      cut = false;
    },
    partition: () => {
      partitioned = true;
    },
    heal: () => {
      partitioned = false;
      for (const release of held.splice(0)) release();
    },
    delay: (ms, which = "both") => {
      delayUpMs = which === "both" ? ms : 0;
      delayDownMs = ms;
    },
    armOnce: (rule) => new Promise<void>((fired) => armed.push({ rule, fired })),
    get isCut() {
      return cut;
    },
    stats,
    close: async () => {
      if (restoreTimer) clearTimeout(restoreTimer);
      for (const release of held.splice(0)) release();
      for (const pair of [...pairs]) reset(pair);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
