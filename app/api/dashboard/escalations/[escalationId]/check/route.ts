import * as api from "@/lib/api/contracts/dashboard";
import { userRoute } from "@/lib/auth/user-route";
import { checkRealSystem } from "@/lib/dashboard/check-real-system";

export const POST = userRoute(api.dashboardCheckRealSystem, "escalation.resolve", async ({ params }) => checkRealSystem(params.escalationId));
