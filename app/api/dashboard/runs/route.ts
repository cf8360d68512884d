import * as api from "@/lib/api/contracts/dashboard";
import { userRoute } from "@/lib/auth/user-route";
import { findRuns } from "@/lib/runs/find-runs";

export const GET = userRoute(api.dashboardFindRuns, "read", async ({ query }) => findRuns(query));
