import * as api from "@/lib/api/contracts/dashboard";
import { userRoute } from "@/lib/auth/user-route";
import { getRunTimeline } from "@/lib/runs/get-run-timeline";

export const GET = userRoute(api.dashboardGetRunTimeline, "read", async ({ params }) => getRunTimeline(params.runId));
