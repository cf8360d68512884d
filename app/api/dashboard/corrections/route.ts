import * as api from "@/lib/delivery/contracts/corrections";
import { userRoute } from "@/lib/delivery/user-route";
import { findCorrections } from "@/lib/desks/corrections/find-corrections";

export const GET = userRoute(api.dashboardFindCorrections, "read", async ({ query, user }) => findCorrections({ actor: user, ...query }));
