import * as api from "@/lib/api/contracts/tools";
import { userRoute } from "@/lib/auth/user-route";
import { findTools } from "@/lib/tools/find-tools";

export const GET = userRoute(api.dashboardFindTools, "read", async () => findTools());
