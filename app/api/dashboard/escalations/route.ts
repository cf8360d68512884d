import * as api from "@/lib/api/contracts/dashboard";
import { userRoute } from "@/lib/auth/user-route";
import { findEscalations } from "@/lib/escalations/find-escalations";

export const GET = userRoute(api.dashboardFindEscalations, "read", async ({ query }) => findEscalations(query));
