import * as api from "@/lib/delivery/contracts/revokes";
import { userRoute } from "@/lib/delivery/user-route";
import { pullStepRevoke } from "@/lib/desks/revokes/pull-revoke";

// A repeat is an answer (200, created: false, the first revoke), not an error.
export const POST = userRoute(api.dashboardPullStepRevoke, "revoke.pull", async ({ params, body, user }) => pullStepRevoke({ actor: user, stepId: params.stepId, reason: body.reason }));
