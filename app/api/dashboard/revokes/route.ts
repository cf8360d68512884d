import * as api from "@/lib/delivery/contracts/revokes";
import { userRoute } from "@/lib/delivery/user-route";
import { findRevokes } from "@/lib/desks/revokes/find-revokes";

export const GET = userRoute(api.dashboardFindRevokes, "read", async ({ query, user }) => findRevokes({ actor: user, ...query }));
