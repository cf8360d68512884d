import * as api from "@/lib/api/contracts/dashboard";
import { userRoute } from "@/lib/auth/user-route";
import { getEscalation } from "@/lib/escalations/get-escalation";

export const GET = userRoute(api.dashboardGetEscalation, "read", async ({ params }) => getEscalation(params.escalationId));
