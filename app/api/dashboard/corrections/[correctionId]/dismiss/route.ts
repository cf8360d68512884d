import * as api from "@/lib/api/contracts/corrections";
import { userRoute } from "@/lib/auth/user-route";
import { dismissCorrection } from "@/lib/corrections/dismiss-correction";

export const POST = userRoute(api.dashboardDismissCorrection, "correction.handle", async ({ params, body }) => dismissCorrection(params.correctionId, body));
