import * as api from "@/lib/api/contracts/dashboard";
import { userRoute } from "@/lib/auth/user-route";
import { resolveEscalation } from "@/lib/dashboard/resolve-escalation";

export const POST = userRoute(api.dashboardResolveEscalation, "escalation.resolve", async ({ params, body }) =>
  resolveEscalation(params.escalationId, body),
);
