import * as api from "@/lib/delivery/contracts/dashboard";
import { userRoute } from "@/lib/delivery/user-route";
import { getPivotScreen } from "@/lib/desks/pivots/get-pivot-screen";

export const GET = userRoute(api.dashboardGetPivotScreen, "read", async ({ params, user }) => getPivotScreen({ actor: user, pivotId: params.pivotId }));
