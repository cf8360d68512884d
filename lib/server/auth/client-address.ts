/**
 * Which address a request came from, for the per-client sign-in limits. A client can write any
 * X-Forwarded-For it likes, so the header is read only as far as proxies we were told to trust
 * wrote it: starting from the socket's peer, each hop that is a trusted proxy hands over to the
 * address it says it saw (the next entry from the right); the first untrusted hop is the client.
 * With no trusted proxies (the default), the socket's peer is the client and the header is ignored.
 *
 * Trusted proxies come from SAGABOARD_TRUSTED_PROXIES: addresses or CIDR ranges, comma-separated
 * (`10.0.0.0/8, 2001:db8::1`). The socket's peer comes from lib/server/auth/socket-address.ts.
 */
import ipaddr from "ipaddr.js";

/** A parsed list of trusted proxies: addresses and CIDR ranges. */
export type TrustedProxies = readonly [ipaddr.IPv4 | ipaddr.IPv6, number][];

/** Parses `IP` or `IP/bits` entries, comma-separated; throws naming the entry that is neither. */
export function parseTrustedProxies(list: string | undefined): TrustedProxies {
  const entries = (list ?? "").split(",").map((e) => e.trim()).filter(Boolean);
  return entries.map((entry) => {
    try {
      if (entry.includes("/")) return ipaddr.parseCIDR(entry);
      const address = ipaddr.parse(entry);
      return [address, address.kind() === "ipv4" ? 32 : 128] as [ipaddr.IPv4 | ipaddr.IPv6, number];
    } catch {
      throw new Error(`SAGABOARD_TRUSTED_PROXIES: "${entry}" is not an IP address or CIDR range; list your proxies' addresses (10.0.0.5) or ranges (10.0.0.0/8), comma-separated.`);
    }
  });
}

/** The trusted proxies SAGABOARD_TRUSTED_PROXIES names (none when unset). */
export function trustedProxiesFromEnv(env: NodeJS.ProcessEnv = process.env): TrustedProxies {
  return parseTrustedProxies(env.SAGABOARD_TRUSTED_PROXIES);
}

/** An address in its one spelling: IPv4-mapped IPv6 as IPv4, IPv6 in its short form; null when not an address. */
export function canonicalAddress(value: string | undefined | null): string | null {
  const text = (value ?? "").trim().replace(/^\[(.*)\]$/, "$1");
  if (!ipaddr.isValid(text)) return null;
  const parsed = ipaddr.process(text);
  return parsed.toString();
}

function isTrusted(address: string, proxies: TrustedProxies): boolean {
  const parsed = ipaddr.process(address);
  return proxies.some(([range, bits]) => parsed.kind() === range.kind() && parsed.match(range, bits));
}

/** Where the request came from (see the file comment); "unknown" when the socket's peer is not known. */
export function clientAddress(input: { socketAddress: string | null; forwardedFor: string | null; trustedProxies: TrustedProxies }): string {
  let current = canonicalAddress(input.socketAddress);
  if (current === null) return "unknown";
  const hops = (input.forwardedFor ?? "").split(",").map((h) => h.trim()).filter(Boolean);
  while (isTrusted(current, input.trustedProxies)) {
    const previous = canonicalAddress(hops.pop());
    // A trusted proxy that names nobody (or garbage) is itself the last address we can vouch for.
    if (previous === null) return current;
    current = previous;
  }
  return current;
}
