import * as api from "@/lib/delivery/contracts/dashboard";
import { userRoute } from "@/lib/delivery/user-route";
import { rejectPivot } from "@/lib/desks/pivots/reject-pivot";

export const POST = userRoute(api.dashboardRejectPivot, "pivot.decide", async ({ params, body, user }) =>
  rejectPivot({ actor: user, pivotId: params.pivotId, planHash: body.planHash, reason: body.reason, ...(body.reasonCode ? { reasonCode: body.reasonCode } : {}) }),
);
