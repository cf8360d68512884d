/**
 * Where a webhook may point. An admin types the URL, the notifier POSTs to it from inside the
 * network, so a target must not reach what only the server can: loopback, private, link-local
 * (with the cloud metadata address 169.254.169.254), unique-local and the other non-public ranges
 * (ipaddr.js's `range()` other than "unicast"), nor Sagaboard itself. A name is judged by every
 * address it resolves to, when saved and again at each send; the send connects only to an address
 * that passed (the check is the socket's DNS lookup), so a name that changes its answer between the
 * two cannot slip through. Credentials in the URL (`user:pass@`) are refused: a receiver authenticates
 * the signature, and the log must never show a password.
 *
 * The development switch SAGABOARD_WEBHOOKS_ALLOW_PRIVATE=1 lets targets on this machine or the
 * private network through (the test suites' receivers listen on 127.0.0.1); never set it in production.
 */
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import ipaddr from "ipaddr.js";

/** Resolves a host name to all its addresses (node's dns.lookup with `all: true`; tests inject a stub). */
export type ResolveHost = (hostname: string) => Promise<LookupAddress[]>;

/** The system resolver, as the HTTP client would use it. */
export const systemResolveHost: ResolveHost = (hostname) =>
  new Promise((resolve, reject) => dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))));

/** How targets are judged. */
export interface WebhookTargetPolicy {
  /** Whether non-public addresses and the app itself are allowed (the development switch). */
  allowPrivate: boolean;
  /** The app's own public origins, refused as targets (SAGABOARD_PUBLIC_URL, NEXTAUTH_URL). */
  ownOrigins: readonly string[];
  /** The resolver. */
  resolve: ResolveHost;
}

/** The policy the environment sets. */
export function webhookTargetPolicy(env: Readonly<Record<string, string | undefined>> = process.env, resolve: ResolveHost = systemResolveHost): WebhookTargetPolicy {
  const ownOrigins = [env.SAGABOARD_PUBLIC_URL, env.NEXTAUTH_URL, `http://localhost:${env.PORT ?? "3000"}`].flatMap((u) => {
    const value = u?.trim();
    return value && URL.canParse(value) ? [new URL(value).host.toLowerCase()] : [];
  });
  return { allowPrivate: env.SAGABOARD_WEBHOOKS_ALLOW_PRIVATE === "1", ownOrigins, resolve };
}

/** Why a target is refused: a fixed vocabulary, so nothing the target said reaches the log. */
export const WebhookTargetRefusal = {
  /** Not an http(s) URL. */
  not_http: "not_http",
  /** The URL carries a user name or password. */
  credentials: "credentials",
  /** The URL names Sagaboard itself. */
  self: "self",
  /** An address (given, or resolved from the name) is not a public one. */
  not_public: "not_public",
  /** The name does not resolve. */
  unresolvable: "unresolvable",
} as const;
export type WebhookTargetRefusal = (typeof WebhookTargetRefusal)[keyof typeof WebhookTargetRefusal];

/** What an admin is told for each refusal (the same words whatever the address or port). */
export const REFUSAL_WORDS: Record<WebhookTargetRefusal, string> = {
  not_http: "use an http:// or https:// address",
  credentials: "remove the user name and password from the URL: the receiver checks the Sagaboard-Signature header instead",
  self: "a webhook cannot point at Sagaboard itself",
  not_public: "the address is not a public one (loopback, private, link-local, unique-local or metadata ranges are refused); point it at the receiver's public address",
  unresolvable: "the host name does not resolve; check the spelling",
};

/** The judgement of one target: a value, not an exception. */
export type WebhookTargetCheck = { ok: true; url: URL } | { ok: false; reason: WebhookTargetRefusal };

/** An IPv4 address from 32 bits held in two 16-bit IPv6 parts. */
function ipv4Of(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/**
 * The IPv4 addresses an IPv6 address carries, by the form that embeds them: IPv4-mapped
 * (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d), SIIT (::ffff:0:a.b.c.d), NAT64 (64:ff9b::a.b.c.d),
 * 6to4 (2002:AABB:CCDD::) and Teredo (its server, and its client with the bits inverted). Each form
 * reaches the IPv4 host through a translator or a tunnel, so it is judged by that host. Empty for
 * every other address.
 */
export function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4[] {
  const p = address.parts as [number, number, number, number, number, number, number, number];
  const [a, b, c, d, e, f, g, h] = p;
  const zeros = (...xs: number[]) => xs.every((x) => x === 0);
  if (zeros(a, b, c, d, e) && f === 0xffff) return [ipv4Of(g, h)]; // mapped
  if (zeros(a, b, c, d) && e === 0xffff && f === 0) return [ipv4Of(g, h)]; // SIIT, RFC 6145
  if (zeros(a, b, c, d, e, f) && (g !== 0 || h > 1)) return [ipv4Of(g, h)]; // compatible (not :: or ::1)
  if (a === 0x64 && b === 0xff9b && zeros(c, d, e, f)) return [ipv4Of(g, h)]; // NAT64 well-known prefix, RFC 6052
  if (a === 0x2002) return [ipv4Of(b, c)]; // 6to4, RFC 3056
  if (a === 0x2001 && b === 0) return [ipv4Of(c, d), ipv4Of(g ^ 0xffff, h ^ 0xffff)]; // Teredo, RFC 4380: server, client
  return [];
}

/**
 * Whether one resolved or literal address is public: an IPv4 address in ipaddr.js's "unicast" range;
 * an IPv6 address that embeds IPv4 ones, when every one of them is; any other IPv6 address in the
 * "unicast" range. A translation prefix that does not say where it leads (NAT64's local-use
 * 64:ff9b:1::/48) is not public.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === "ipv4") return parsed.range() === "unicast";
  const embedded = embeddedIPv4(parsed as ipaddr.IPv6);
  if (embedded.length > 0) return embedded.every((v4) => v4.range() === "unicast");
  return parsed.range() === "unicast";
}

/** The URL's host without IPv6 brackets. */
function bareHost(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, "$1");
}

/** Judges the URL alone (scheme, credentials, Sagaboard itself): no DNS. */
function checkUrl(raw: string, policy: WebhookTargetPolicy): WebhookTargetCheck {
  if (!URL.canParse(raw)) return { ok: false, reason: WebhookTargetRefusal.not_http };
  // The WHATWG parser writes 2130706433, 0x7f000001 and 127.1 as 127.0.0.1, and [::1] as [::1].
  const url = new URL(raw);
  if (url.protocol !== "http:" && url.protocol !== "https:") return { ok: false, reason: WebhookTargetRefusal.not_http };
  if (url.username !== "" || url.password !== "") return { ok: false, reason: WebhookTargetRefusal.credentials };
  if (!policy.allowPrivate && policy.ownOrigins.includes(url.host.toLowerCase())) return { ok: false, reason: WebhookTargetRefusal.self };
  return { ok: true, url };
}

/** Judges the addresses a host has: every one must be public (unless the switch allows private ones). */
async function checkAddresses(host: string, policy: WebhookTargetPolicy): Promise<{ ok: true; addresses: LookupAddress[] } | { ok: false; reason: WebhookTargetRefusal }> {
  const addresses: LookupAddress[] = ipaddr.isValid(host) ? [{ address: host, family: ipaddr.parse(host).kind() === "ipv6" ? 6 : 4 }] : await policy.resolve(host).catch(() => []);
  if (addresses.length === 0) return { ok: false, reason: WebhookTargetRefusal.unresolvable };
  if (!policy.allowPrivate && !addresses.every((a) => isPublicAddress(a.address))) return { ok: false, reason: WebhookTargetRefusal.not_public };
  return { ok: true, addresses };
}

/** Judges a target: the URL, then every address its host resolves to. */
export async function checkWebhookTarget(raw: string, policy: WebhookTargetPolicy): Promise<WebhookTargetCheck> {
  const checked = checkUrl(raw, policy);
  if (!checked.ok) return checked;
  const addresses = await checkAddresses(bareHost(checked.url), policy);
  return addresses.ok ? checked : addresses;
}

/** A refused target, as a thrown error the sender turns into its fixed log line. */
export class WebhookTargetRefused extends Error {
  constructor(readonly reason: WebhookTargetRefusal) {
    super(`webhook target refused: ${reason}`);
  }
}

/**
 * A `lookup` for node's http(s).request that resolves with `policy` and hands the socket only
 * addresses that passed: the connection goes where the check looked.
 */
export function checkedLookup(policy: WebhookTargetPolicy) {
  return (hostname: string, options: { all?: boolean }, callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void): void => {
    checkAddresses(hostname.replace(/^\[(.*)\]$/, "$1"), policy).then(
      (result) => {
        if (!result.ok) return callback(new WebhookTargetRefused(result.reason), "");
        if (options.all) return callback(null, result.addresses);
        const first = result.addresses[0] as LookupAddress;
        callback(null, first.address, first.family);
      },
      (e: unknown) => callback(e instanceof Error ? e : new Error(String(e)), ""),
    );
  };
}
