/**
 * The route wrapper for the dashboard's own endpoints (contracts with `auth: "user"`): like
 * `agentRoute`, but the caller is a signed-in person, authenticated by the next-auth session cookie
 * and authorized by role on every request:
 *
 *   export const POST = userRoute(api.adminDisableUser, "users.manage", async ({ body, user, prisma }) =>
 *     toChangedAdminUser(await disableUser(prisma, { ...body, by: { type: "user", id: user.email } })));
 *
 * (app/api/dashboard/admin/users/disable/route.ts.)
 *
 * For every request it: refuses a POST/PUT/PATCH/DELETE whose Origin is another site (403; route
 * handlers have no CSRF protection of their own), reads the session and then the User row (401 when
 * signed out or disabled, 403 when the role lacks `action`), refuses bodies over 1 MiB, validates
 * body, params and query (400 naming each field), calls the handler, parses its result with the
 * response schema, and maps anything thrown to the one error body. Lib functions called by the
 * handler still check what is specific to them (e.g. that the claimer of an escalation resolves it).
 *
 * No Idempotency-Key handling: browsers do not send one, and the dashboard's decisions are guarded by
 * their own state (a pivot decided once, an escalation claimed once).
 */
import type * as z from "zod";
import type { Endpoint, ObjectSchema } from "@/packages/client/src/protocol/endpoint";
import {
  assertAuth,
  jsonResponse,
  readInputs,
  respond,
  withNoStore,
  type HandlerResult,
  type PublicHandlerContext,
  type RouteHandler,
} from "@/lib/delivery/route";
import { toErrorResponse } from "@/lib/core/error-response";
import { getPrisma, type PrismaClient } from "@/lib/core/db/prisma";
import { requireUser, type CurrentUser, type SessionReader } from "@/lib/server/auth/current-user";
import { assertSameOrigin, MUTATING_METHODS } from "@/lib/server/auth/origin";
import type { Action } from "@/lib/server/auth/roles";

/** What a user endpoint's handler receives. */
export interface UserHandlerContext<TParams, TQuery, TBody> extends PublicHandlerContext<TParams, TQuery, TBody> {
  /** The signed-in person, read from the database for this request, allowed to do the route's action. */
  user: CurrentUser;
  /** The process-wide Prisma client. */
  prisma: PrismaClient;
}

/** A user endpoint's handler. */
export type UserHandler<TParams, TQuery, TBody, TResponse extends z.ZodType> = (
  ctx: UserHandlerContext<TParams, TQuery, TBody>,
) => Promise<HandlerResult<TResponse>> | HandlerResult<TResponse>;

/** Options of `userRoute`. */
export interface UserRouteOptions {
  /** Reads the session's user id (default: the next-auth cookie); tests pass a fake. */
  readSession?: SessionReader;
}

/** A route handler for an endpoint that signed-in people call from the dashboard. */
export function userRoute<
  TParams extends ObjectSchema | undefined,
  TQuery extends ObjectSchema | undefined,
  TBody extends z.ZodType | undefined,
  TResponse extends z.ZodType,
>(
  endpoint: Endpoint<TParams, TQuery, TBody, TResponse, "user">,
  action: Action,
  handler: UserHandler<TParams, TQuery, TBody, TResponse>,
  options: UserRouteOptions = {},
): RouteHandler {
  assertAuth(endpoint, "user", "userRoute");
  return async (request, context) => {
    try {
      // Before anything else: a forged cross-site request learns nothing and costs no database read.
      if (MUTATING_METHODS.has(request.method.toUpperCase())) assertSameOrigin(request);
      const prisma = await getPrisma();
      const user = await requireUser(action, { prisma, readSession: options.readSession });
      const { inputs } = await readInputs(endpoint, request, context);
      return jsonResponse(await respond(endpoint, () => handler({ ...inputs, request, user, prisma })));
    } catch (e) {
      return withNoStore(toErrorResponse(e));
    }
  };
}
