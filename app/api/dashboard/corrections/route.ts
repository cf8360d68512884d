import * as api from "@/lib/api/contracts/corrections";
import { userRoute } from "@/lib/auth/user-route";
import { findCorrections } from "@/lib/corrections/find-corrections";

export const GET = userRoute(api.dashboardFindCorrections, "read", async ({ query }) => findCorrections(query));
