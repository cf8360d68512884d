import * as api from "@/lib/api/contracts/corrections";
import { userRoute } from "@/lib/auth/user-route";
import { claimCorrection } from "@/lib/corrections/claim-correction";

// Losing the claim is an answer (200, ok: false, heldBy), not an error.
export const POST = userRoute(api.dashboardClaimCorrection, "correction.handle", async ({ params }) => claimCorrection(params.correctionId));
