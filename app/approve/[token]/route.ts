/**
 * The address in an approval email (`/approve/<secret>`). Opening it never decides: a mail scanner's
 * GET or HEAD without a session is sent to sign in, and the pivot stays pending. A signed-in person
 * whose link it is goes on to its confirm page (the secret moves into a cookie, out of the address);
 * anyone else, a used link, or a link that no longer works gets a page saying so (403, 409, 410,
 * 404), each refusal of a known link in the audit log. A single sign-on session older than
 * SAGABOARD_APPROVAL_SIGNIN_MAX_AGE_SEC signs in again first.
 */
import { linkCookie, refusalPage, seeOther } from "@/lib/delivery/approval-link-pages";
import { getPrisma } from "@/lib/core/db/prisma";
import { openApprovalLink } from "@/lib/desks/approvals/open-approval-link";
import { needsFreshSignIn } from "@/lib/server/approvals/fresh-sign-in";
import { readSessionIdentity, readSessionState } from "@/lib/server/auth/current-user";
import { signInPath } from "@/lib/server/auth/return-path";

type Context = { params: Promise<{ token: string }> };

async function open(request: Request, context: Context, head: boolean): Promise<Response> {
  const { token } = await context.params;
  const here = `/approve/${encodeURIComponent(token)}`;
  const prisma = await getPrisma();
  const state = await readSessionState({ prisma });
  if (state.kind !== "signed-in") return seeOther(signInPath(here));
  const session = await readSessionIdentity({ prisma });
  if (session && (await needsFreshSignIn(prisma, session.sessionId))) return seeOther(`${signInPath(here)}&reauth=approval`);
  const opened = await openApprovalLink({ actor: state.user, prisma, secret: token });
  if (!opened.ok) {
    const page = refusalPage(opened.refusal, request.headers.get("x-nonce"));
    return head ? new Response(null, { status: page.status, headers: page.headers }) : page;
  }
  const https = new URL(request.url).protocol === "https:" || request.headers.get("x-forwarded-proto") === "https";
  return seeOther(`/approvals/${encodeURIComponent(opened.linkId)}`, linkCookie(opened.linkId, token, https));
}

export function GET(request: Request, context: Context): Promise<Response> {
  return open(request, context, false);
}

export function HEAD(request: Request, context: Context): Promise<Response> {
  return open(request, context, true);
}
