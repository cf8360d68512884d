import * as api from "@/lib/api/contracts/dashboard";
import { userRoute } from "@/lib/auth/user-route";
import { releaseEscalation } from "@/lib/escalations/release-escalation";

// Who may work the item is decided in the lib function (the item's owner team and kind).
export const POST = userRoute(api.dashboardReleaseEscalation, "read", async ({ params }) => releaseEscalation(params.escalationId));
