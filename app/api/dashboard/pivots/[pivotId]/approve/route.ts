import * as api from "@/lib/delivery/contracts/dashboard";
import { userRoute } from "@/lib/delivery/user-route";
import { approvePivot } from "@/lib/desks/pivots/approve-pivot";

// A changed plan is an answer (200, ok: false, with the current plan), not an error.
export const POST = userRoute(api.dashboardApprovePivot, "pivot.decide", async ({ params, body, user }) =>
  approvePivot({ actor: user, pivotId: params.pivotId, planHash: body.planHash }),
);
