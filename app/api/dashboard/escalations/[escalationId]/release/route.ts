import * as api from "@/lib/api/contracts/dashboard";
import { userRoute } from "@/lib/auth/user-route";
import { releaseEscalation } from "@/lib/dashboard/release-escalation";

export const POST = userRoute(api.dashboardReleaseEscalation, "escalation.claim", async ({ params }) => releaseEscalation(params.escalationId));
