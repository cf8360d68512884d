import * as api from "@/lib/delivery/contracts/corrections";
import { userRoute } from "@/lib/delivery/user-route";
import { claimCorrection } from "@/lib/desks/corrections/claim-correction";

// Losing the claim is an answer (200, ok: false, heldBy), not an error.
export const POST = userRoute(api.dashboardClaimCorrection, "correction.handle", async ({ params, user }) => claimCorrection({ actor: user, correctionId: params.correctionId }));
