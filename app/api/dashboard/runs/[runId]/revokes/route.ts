import * as api from "@/lib/delivery/contracts/revokes";
import { userRoute } from "@/lib/delivery/user-route";
import { getRevokeOptions } from "@/lib/desks/revokes/get-revoke-options";

export const GET = userRoute(api.dashboardGetRevokeOptions, "read", async ({ params }) => getRevokeOptions(params.runId));
