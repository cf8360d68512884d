import * as api from "@/lib/api/contracts/corrections";
import { userRoute } from "@/lib/auth/user-route";
import { editCorrection } from "@/lib/corrections/edit-correction";

export const POST = userRoute(api.dashboardEditCorrection, "correction.handle", async ({ params, body }) => editCorrection(params.correctionId, body));
