import * as api from "@/lib/delivery/contracts/dashboard";
import { userRoute } from "@/lib/delivery/user-route";
import { checkRealSystem, getRealSystemCheck } from "@/lib/desks/escalations/check-real-system";

// Who may work the item is decided in the lib functions (the item's owner team and kind).
export const POST = userRoute(api.dashboardCheckRealSystem, "read", async ({ params, user }) => checkRealSystem({ actor: user, escalationId: params.escalationId }));
export const GET = userRoute(api.dashboardGetRealSystemCheck, "read", async ({ params, user }) => getRealSystemCheck({ actor: user, escalationId: params.escalationId }));
