/**
 * Route handlers for the two audit endpoints `userRoute` cannot serve: a streamed file (the CSV and
 * JSON lines exports: a Response over a ReadableStream, with a file name) and a large upload (a saved
 * heads file grows with the number of chains, past userRoute's 1 MiB). They keep userRoute's rules:
 * a POST must come from this site (assertSameOrigin: route handlers have no CSRF protection), the
 * session and the User row are read for every request (401 signed out, 403 without the role), inputs
 * are checked with the contract's schemas (400 naming each field), responses are never cached, and
 * anything thrown becomes the one error body. The lib use case each handler calls checks again.
 */
import type * as z from "zod";
import type { Endpoint } from "@/packages/client/src/protocol/endpoint";
import { ApiError, validationError, zodIssuesToDetails } from "@/packages/client/src/protocol/errors";
import { toErrorResponse } from "@/lib/core/error-response";
import { jsonResponse, readJsonBody, respond, withNoStore, type RouteHandler } from "@/lib/delivery/route";
import { requireUser, type CurrentUser } from "@/lib/server/auth/current-user";
import { assertSameOrigin, MUTATING_METHODS } from "@/lib/server/auth/origin";
import type { Action } from "@/lib/server/auth/roles";
import { getPrisma } from "@/lib/core/db/prisma";

/** A file to send: its content as a stream, its type and its name. */
export interface FileResponse {
  /** The content, produced as it is sent. */
  stream: ReadableStream<Uint8Array>;
  /** MIME type. */
  contentType: string;
  /** The name the browser saves it under. */
  filename: string;
}

async function authorize(request: Request, action: Action): Promise<CurrentUser> {
  // Before anything else: a forged cross-site request learns nothing and costs no database read.
  if (MUTATING_METHODS.has(request.method.toUpperCase())) assertSameOrigin(request);
  return requireUser(action, { prisma: await getPrisma() });
}

/** The query string as an object (a repeated name: its first value). */
function queryOf(request: Request): Record<string, string> {
  const query: Record<string, string> = {};
  for (const [name, value] of new URL(request.url).searchParams) query[name] ??= value;
  return query;
}

/**
 * A GET handler that sends a file: checks the caller, parses the query with `schema` and streams
 * what `produce` returns as an attachment.
 */
export function fileRoute<TQuery extends z.ZodType>(action: Action, schema: TQuery, produce: (query: z.output<TQuery>, user: CurrentUser) => Promise<FileResponse>): RouteHandler {
  return async (request) => {
    try {
      const user = await authorize(request, action);
      const parsed = await schema.safeParseAsync(queryOf(request));
      if (!parsed.success) throw validationError(zodIssuesToDetails(parsed.error, "query"));
      const file = await produce(parsed.data, user);
      return new Response(file.stream, {
        headers: {
          "content-type": file.contentType,
          "content-disposition": `attachment; filename="${file.filename.replace(/["\\\r\n]/g, "_")}"`,
          "cache-control": "no-store, no-transform",
          "x-content-type-options": "nosniff",
        },
      });
    } catch (e) {
      return withNoStore(toErrorResponse(e));
    }
  };
}

function tooLarge(maxBytes: number): ApiError {
  const mib = Math.round(maxBytes / 1024 / 1024);
  return new ApiError("PAYLOAD_TOO_LARGE", `The file is larger than ${mib} MiB, the most this endpoint reads. Check it in parts (split its heads) or ask an admin.`, {
    details: [{ path: "body", message: `larger than ${maxBytes} bytes` }],
  });
}

/** A POST handler for an endpoint whose JSON body may be up to `maxBytes` (a file a person uploads). */
export function uploadRoute<TBody extends z.ZodType, TResponse extends z.ZodType>(
  endpoint: Endpoint<undefined, undefined, TBody, TResponse, "user">,
  action: Action,
  maxBytes: number,
  handler: (body: z.output<TBody>, user: CurrentUser) => Promise<z.input<TResponse>>,
): RouteHandler {
  return async (request) => {
    try {
      const user = await authorize(request, action);
      const parsed = await endpoint.body.safeParseAsync(await readJsonBody(request, { maxBytes, tooLarge: () => tooLarge(maxBytes), what: "The uploaded file" }));
      if (!parsed.success) throw validationError(zodIssuesToDetails(parsed.error, "body"), "The uploaded file");
      return jsonResponse(await respond(endpoint, () => handler(parsed.data, user)));
    } catch (e) {
      return withNoStore(toErrorResponse(e));
    }
  };
}
