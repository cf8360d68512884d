import * as api from "@/lib/api/contracts/admin-people";
import { userRoute } from "@/lib/auth/user-route";
import { signOutEverywhere } from "@/lib/users/sign-out-everywhere";

export const POST = userRoute(api.dashboardSignOutEverywhere, "read", async () => signOutEverywhere());
