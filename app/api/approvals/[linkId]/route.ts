/**
 * The confirm page's POST: the only request that decides from an approval email. Same-origin
 * (cookie-authenticated form), the signed-in person's own link (its secret from the cookie the link
 * set), a decision the form names; answered with a redirect back to the confirm page, which then says
 * what happened, or with the refusal's page and status (409 used, 410 no longer usable, 403 someone
 * else's). lib/desks/approvals/decide-by-approval-link.ts decides.
 */
import { linkSecretOf, refusalPage, seeOther } from "@/lib/delivery/approval-link-pages";
import { getPrisma } from "@/lib/core/db/prisma";
import { toErrorResponse } from "@/lib/core/error-response";
import { decideByApprovalLink, ZLinkDecisionForm } from "@/lib/desks/approvals/decide-by-approval-link";
import { readSessionState } from "@/lib/server/auth/current-user";
import { assertSameOrigin } from "@/lib/server/auth/origin";
import { signInPath } from "@/lib/server/auth/return-path";

type Context = { params: Promise<{ linkId: string }> };

export async function POST(request: Request, context: Context): Promise<Response> {
  try {
    assertSameOrigin(request);
    const { linkId } = await context.params;
    const page = `/approvals/${encodeURIComponent(linkId)}`;
    const prisma = await getPrisma();
    const state = await readSessionState({ prisma });
    if (state.kind !== "signed-in") return seeOther(signInPath(page));
    const fields = Object.fromEntries((await request.formData().catch(() => new FormData())).entries());
    const form = ZLinkDecisionForm.safeParse(fields);
    if (!form.success) {
      const problems = form.error.issues.map((i) => `${i.path.join(".") || "form"}: ${i.message}`).join("; ");
      return refusalPage({ status: 400, title: "The decision was not sent", message: `${problems}. Go back, fill it in and send it again; nothing was decided.`, itemPath: null }, null);
    }
    const decided = await decideByApprovalLink({ actor: state.user, prisma, linkId, secret: linkSecretOf(request.headers.get("cookie"), linkId), form: form.data });
    return decided.ok ? seeOther(page) : refusalPage(decided.refusal, null);
  } catch (e) {
    return toErrorResponse(e);
  }
}
