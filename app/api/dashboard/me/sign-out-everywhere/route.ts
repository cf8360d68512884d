import * as api from "@/lib/delivery/contracts/admin-people";
import { userRoute } from "@/lib/delivery/user-route";
import { signOutEverywhere } from "@/lib/server/users/sign-out-everywhere";

export const POST = userRoute(api.dashboardSignOutEverywhere, "read", async ({ user }) => signOutEverywhere({ actor: user }));
