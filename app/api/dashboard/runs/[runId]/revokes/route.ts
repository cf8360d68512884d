import * as api from "@/lib/delivery/contracts/revokes";
import { userRoute } from "@/lib/delivery/user-route";
import { getRevokeOptions } from "@/lib/desks/revokes/get-revoke-options";

export const GET = userRoute(api.dashboardGetRevokeOptions, "read", async ({ params, user }) => getRevokeOptions({ actor: user, runId: params.runId }));
