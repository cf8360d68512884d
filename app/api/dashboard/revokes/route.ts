import * as api from "@/lib/api/contracts/revokes";
import { userRoute } from "@/lib/auth/user-route";
import { findRevokes } from "@/lib/revokes/find-revokes";

export const GET = userRoute(api.dashboardFindRevokes, "read", async ({ query }) => findRevokes(query));
