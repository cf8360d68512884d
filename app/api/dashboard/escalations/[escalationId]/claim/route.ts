import * as api from "@/lib/api/contracts/dashboard";
import { userRoute } from "@/lib/auth/user-route";
import { claimEscalation } from "@/lib/dashboard/claim-escalation";

// Losing the claim is an answer (200, ok: false, heldBy), not an error.
export const POST = userRoute(api.dashboardClaimEscalation, "escalation.claim", async ({ params }) => claimEscalation(params.escalationId));
