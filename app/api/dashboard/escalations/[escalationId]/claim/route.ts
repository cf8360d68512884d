import * as api from "@/lib/delivery/contracts/dashboard";
import { userRoute } from "@/lib/delivery/user-route";
import { claimEscalation } from "@/lib/desks/escalations/claim-escalation";

// Losing the claim is an answer (200, ok: false, heldBy), not an error.
// Who may work the item is decided in the lib function (the item's owner team and kind).
export const POST = userRoute(api.dashboardClaimEscalation, "read", async ({ params, user }) => claimEscalation({ actor: user, escalationId: params.escalationId }));
