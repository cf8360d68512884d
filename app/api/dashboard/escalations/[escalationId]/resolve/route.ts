import * as api from "@/lib/delivery/contracts/dashboard";
import { userRoute } from "@/lib/delivery/user-route";
import { resolveEscalation } from "@/lib/desks/escalations/resolve-escalation";

// Who may work the item is decided in the lib function (the item's owner team and kind).
export const POST = userRoute(api.dashboardResolveEscalation, "read", async ({ params, body, user }) =>
  resolveEscalation({ actor: user, escalationId: params.escalationId, ...body }),
);
