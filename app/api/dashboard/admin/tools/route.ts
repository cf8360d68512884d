import * as api from "@/lib/delivery/contracts/tools";
import { userRoute } from "@/lib/delivery/user-route";
import { findTools } from "@/lib/server/tools/find-tools";

export const GET = userRoute(api.dashboardFindTools, "read", async ({ user }) => findTools({ actor: user }));
