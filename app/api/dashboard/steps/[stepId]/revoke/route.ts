import * as api from "@/lib/api/contracts/revokes";
import { userRoute } from "@/lib/auth/user-route";
import { pullStepRevoke } from "@/lib/revokes/pull-revoke";

// A repeat is an answer (200, created: false, the first revoke), not an error.
export const POST = userRoute(api.dashboardPullStepRevoke, "revoke.pull", async ({ params, body }) => pullStepRevoke({ stepId: params.stepId, reason: body.reason }));
