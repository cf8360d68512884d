import * as api from "@/lib/api/contracts/dashboard";
import { userRoute } from "@/lib/auth/user-route";
import { resolveEscalation } from "@/lib/escalations/resolve-escalation";

// Who may work the item is decided in the lib function (the item's owner team and kind).
export const POST = userRoute(api.dashboardResolveEscalation, "read", async ({ params, body }) =>
  resolveEscalation(params.escalationId, body),
);
