import * as api from "@/lib/api/contracts/dashboard";
import { userRoute } from "@/lib/auth/user-route";
import { getPivotScreen } from "@/lib/pivots/get-pivot-screen";

export const GET = userRoute(api.dashboardGetPivotScreen, "read", async ({ params }) => getPivotScreen(params.pivotId));
