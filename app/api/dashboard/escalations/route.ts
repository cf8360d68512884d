import * as api from "@/lib/delivery/contracts/dashboard";
import { userRoute } from "@/lib/delivery/user-route";
import { findEscalations } from "@/lib/desks/escalations/find-escalations";

export const GET = userRoute(api.dashboardFindEscalations, "read", async ({ query, user }) => findEscalations({ actor: user, ...query }));
