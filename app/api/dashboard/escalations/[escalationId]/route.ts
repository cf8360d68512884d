import * as api from "@/lib/delivery/contracts/dashboard";
import { userRoute } from "@/lib/delivery/user-route";
import { getEscalation } from "@/lib/desks/escalations/get-escalation";

export const GET = userRoute(api.dashboardGetEscalation, "read", async ({ params, user }) => getEscalation({ actor: user, escalationId: params.escalationId }));
