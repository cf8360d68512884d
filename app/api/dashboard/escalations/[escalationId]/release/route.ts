import * as api from "@/lib/delivery/contracts/dashboard";
import { userRoute } from "@/lib/delivery/user-route";
import { releaseEscalation } from "@/lib/desks/escalations/release-escalation";

// Who may work the item is decided in the lib function (the item's owner team and kind).
export const POST = userRoute(api.dashboardReleaseEscalation, "read", async ({ params, user }) => releaseEscalation({ actor: user, escalationId: params.escalationId }));
