import * as api from "@/lib/delivery/contracts/dashboard";
import { userRoute } from "@/lib/delivery/user-route";
import { findRuns } from "@/lib/desks/runs/find-runs";

export const GET = userRoute(api.dashboardFindRuns, "read", async ({ query, user }) => findRuns({ actor: user, ...query }));
