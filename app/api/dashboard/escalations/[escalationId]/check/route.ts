import * as api from "@/lib/api/contracts/dashboard";
import { userRoute } from "@/lib/auth/user-route";
import { checkRealSystem } from "@/lib/dashboard/check-real-system";

// Who may work the item is decided in the lib function (the item's owner team and kind).
export const POST = userRoute(api.dashboardCheckRealSystem, "read", async ({ params }) => checkRealSystem(params.escalationId));
