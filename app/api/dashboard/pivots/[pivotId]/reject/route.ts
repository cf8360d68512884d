import * as api from "@/lib/api/contracts/dashboard";
import { userRoute } from "@/lib/auth/user-route";
import { rejectPivot } from "@/lib/pivots/reject-pivot";

export const POST = userRoute(api.dashboardRejectPivot, "pivot.decide", async ({ params, body }) =>
  rejectPivot({ pivotId: params.pivotId, planHash: body.planHash, reason: body.reason, ...(body.reasonCode ? { reasonCode: body.reasonCode } : {}) }),
);
