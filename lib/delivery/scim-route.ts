/**
 * The route wrapper of the SCIM endpoints (app/scim/v2/**), which identity providers call with a
 * bearer token an admin made on the users page. SCIM has its own error shape (RFC 7644 3.12) and
 * media type, so this is not `agentRoute`: it checks the token (401 with WWW-Authenticate), reads the
 * JSON body (1 MiB at most), calls the handler, and answers every refusal in SCIM's shape with a
 * detail that says what to send instead. A request without a valid token, and one for a person or
 * group that does not exist, is written to the SCIM audit chain.
 */
import { getPrisma, type PrismaClient } from "@/lib/core/db/prisma";
import { toErrorPayload } from "@/lib/core/error-response";
import type { Actor } from "@/packages/client/src/saga/store";
import { publicBaseUrl } from "@/lib/server/notifications/compose-notification";
import { findScimToken } from "@/lib/server/scim/scim-token";
import { ScimError } from "@/lib/server/scim/scim-resources";
import { appendIdentityEvent, SCIM_SCOPE } from "@/lib/server/sso/sso-audit";
import { readJsonBody, type RouteContext } from "./route";

/** What a SCIM handler gets. */
export interface ScimHandlerContext {
  /** The request. */
  request: Request;
  /** Its URL (filters and paging are in the query). */
  url: URL;
  /** The path's parameters (`id`). */
  params: Record<string, string>;
  /** The JSON body, for POST, PUT and PATCH. */
  body: unknown;
  /** The provider's SCIM client, as the audit log names it (`system:scim:<token name>`). */
  by: Actor;
  /** The database. */
  prisma: PrismaClient;
  /** The SCIM base URL (`<public URL>/scim/v2`), for each resource's location. */
  baseUrl: string;
}

/** A SCIM handler's answer: a status and a resource (none for 204). */
export interface ScimAnswer {
  status: number;
  body?: unknown;
}

const SCIM_MEDIA_TYPE = "application/scim+json; charset=utf-8";

function answer(status: number, body?: unknown, headers: Record<string, string> = {}): Response {
  if (body === undefined) return new Response(null, { status, headers: { "cache-control": "no-store", ...headers } });
  return new Response(JSON.stringify(body), { status, headers: { "content-type": SCIM_MEDIA_TYPE, "cache-control": "no-store", ...headers } });
}

function bearer(request: Request): string | null {
  const header = request.headers.get("authorization") ?? "";
  const match = /^Bearer\s+(\S+)$/i.exec(header.trim());
  return match?.[1] ?? null;
}

/** A SCIM route handler: token, body, handler, SCIM's errors. */
export function scimRoute(handler: (ctx: ScimHandlerContext) => Promise<ScimAnswer>) {
  return async (request: Request, context?: RouteContext): Promise<Response> => {
    const url = new URL(request.url);
    const where = { method: request.method, path: url.pathname };
    let prisma: PrismaClient | null = null;
    try {
      prisma = await getPrisma();
      const secret = bearer(request);
      const token = await findScimToken(prisma, secret);
      if (!token) {
        await appendIdentityEvent(prisma, SCIM_SCOPE, "scim.refused", { type: "system", id: "scim" }, { ...where, reason: secret ? "unknown or revoked token" : "no bearer token" });
        const error = new ScimError(401, secret ? "This SCIM token is unknown or revoked; make a new one on Sagaboard's users page and give it to the identity provider." : "Send the SCIM token an admin made on Sagaboard's users page: Authorization: Bearer <token>.");
        return answer(401, error.body(), { "www-authenticate": 'Bearer realm="sagaboard-scim"' });
      }
      const by: Actor = { type: "system", id: `scim:${token.name}` };
      const body = ["POST", "PUT", "PATCH"].includes(request.method.toUpperCase()) ? await readJsonBody(request) : undefined;
      const params = (await context?.params) ?? {};
      const result = await handler({ request, url, params: params as Record<string, string>, body, by, prisma, baseUrl: `${publicBaseUrl()}/scim/v2` });
      return answer(result.status, result.body);
    } catch (e) {
      if (e instanceof ScimError) {
        if (e.status === 404 && prisma) await appendIdentityEvent(prisma, SCIM_SCOPE, "scim.refused", { type: "system", id: "scim" }, { ...where, reason: e.message }).catch(() => undefined);
        return answer(e.status, e.body());
      }
      const { status, body } = toErrorPayload(e);
      return answer(status, new ScimError(status, body.error.message, status === 400 ? "invalidSyntax" : undefined).body());
    }
  };
}
