import * as api from "@/lib/delivery/contracts/dashboard";
import { userRoute } from "@/lib/delivery/user-route";
import { getRunTimeline } from "@/lib/desks/runs/get-run-timeline";

export const GET = userRoute(api.dashboardGetRunTimeline, "read", async ({ params, user }) => getRunTimeline({ actor: user, runId: params.runId }));
