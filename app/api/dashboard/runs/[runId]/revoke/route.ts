import * as api from "@/lib/delivery/contracts/revokes";
import { userRoute } from "@/lib/delivery/user-route";
import { pullRunRevoke } from "@/lib/desks/revokes/pull-revoke";

// A repeat is an answer (200, created: false, the first revoke), not an error.
export const POST = userRoute(api.dashboardPullRunRevoke, "revoke.pull", async ({ params, body, user }) => pullRunRevoke({ actor: user, runId: params.runId, reason: body.reason }));
