import * as api from "@/lib/api/contracts/revokes";
import { userRoute } from "@/lib/auth/user-route";
import { getRevokeOptions } from "@/lib/revokes/get-revoke-options";

export const GET = userRoute(api.dashboardGetRevokeOptions, "read", async ({ params }) => getRevokeOptions(params.runId));
