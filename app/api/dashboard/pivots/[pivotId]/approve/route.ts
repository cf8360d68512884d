import * as api from "@/lib/api/contracts/dashboard";
import { userRoute } from "@/lib/auth/user-route";
import { approvePivot } from "@/lib/pivots/approve-pivot";

// A changed plan is an answer (200, ok: false, with the current plan), not an error.
export const POST = userRoute(api.dashboardApprovePivot, "pivot.decide", async ({ params, body }) =>
  approvePivot({ pivotId: params.pivotId, planHash: body.planHash }),
);
