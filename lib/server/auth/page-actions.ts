/**
 * What each page needs, for the 403 page to say why. Next renders app/forbidden.tsx apart from the
 * page that called `forbidden()` (and may render it before the page runs), so the page cannot hand
 * it a reason; the 403 page works it out again from the path (proxy.ts passes it in PAGE_PATH_HEADER)
 * and the signed-in person. tests/api/pages-auth.test.ts checks this table against every page's
 * own requirePageUser(...) call, so the two cannot drift.
 */
import type { Action } from "./roles";

/** The request header proxy.ts sets to the page's path. */
export const PAGE_PATH_HEADER = "x-sagaboard-page-path";

/** Pages that need more than `read`, by path. */
export const PAGE_ACTIONS = {
  "/admin/users": "users.manage",
  "/admin/tokens": "tokens.manage",
  "/admin/webhooks": "tokens.manage",
  "/admin/operations": "users.manage",
  "/admin/personal-data": "users.manage",
} as const satisfies Record<string, Action>;

/** The action the page at `pathname` requires. */
export function pageAction(pathname: string): Action {
  const path = pathname.replace(/\/+$/, "") || "/";
  return (PAGE_ACTIONS as Record<string, Action>)[path] ?? "read";
}
