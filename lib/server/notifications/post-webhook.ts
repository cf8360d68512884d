/**
 * One webhook POST, made so the delivery log cannot become a window into the network: the target is
 * checked (lib/server/notifications/webhook-target.ts) and the socket connects only to checked addresses;
 * redirects are not followed (a 3xx is a failed delivery); the receiver's body is never read into
 * anything; and every way of not reaching the receiver (refused, unresolvable, connection refused,
 * reset, timeout) is the same outcome, so the log does not tell one port or host from another.
 */
import http from "node:http";
import https from "node:https";
import { checkedLookup, checkWebhookTarget, type WebhookTargetPolicy, WebhookTargetRefused, type WebhookTargetRefusal } from "./webhook-target";

/** What one POST came to: the receiver's status, a refused target, or no answer. */
export type WebhookPostResult = { kind: "answered"; status: number } | { kind: "refused"; reason: WebhookTargetRefusal } | { kind: "unreachable" };

/** The one line the log keeps for a target that did not answer, whatever the reason. */
export const UNREACHABLE_ERROR = "the receiver could not be reached (no answer within the timeout, or the connection failed)";

/** POSTs `body` to `target` with `headers`; never throws, never reads the answer's body. */
export async function postWebhook(target: string, init: { headers: Record<string, string>; body: string; timeoutMs: number; policy: WebhookTargetPolicy }): Promise<WebhookPostResult> {
  const checked = await checkWebhookTarget(target, init.policy);
  if (!checked.ok) return { kind: "refused", reason: checked.reason };
  const url = checked.url;
  const client = url.protocol === "https:" ? https : http;
  return new Promise<WebhookPostResult>((resolve) => {
    const request = client.request(
      url,
      {
        method: "POST",
        headers: { ...init.headers, "content-length": String(Buffer.byteLength(init.body)) },
        lookup: checkedLookup(init.policy) as unknown as typeof import("node:dns").lookup,
        timeout: init.timeoutMs,
        // A fresh connection each time: a pooled socket would skip the checked lookup.
        agent: false,
      },
      (response) => {
        // Discard whatever the receiver says: only its status is kept.
        response.resume();
        resolve({ kind: "answered", status: response.statusCode ?? 0 });
        request.destroy();
      },
    );
    const deadline = setTimeout(() => request.destroy(new Error("timeout")), init.timeoutMs);
    request.on("close", () => clearTimeout(deadline));
    request.on("timeout", () => request.destroy(new Error("timeout")));
    request.on("error", (e) => resolve(e instanceof WebhookTargetRefused ? { kind: "refused", reason: e.reason } : { kind: "unreachable" }));
    request.end(init.body);
  });
}
