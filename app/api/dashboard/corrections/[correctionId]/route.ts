import * as api from "@/lib/api/contracts/corrections";
import { userRoute } from "@/lib/auth/user-route";
import { getCorrection } from "@/lib/corrections/get-correction";

export const GET = userRoute(api.dashboardGetCorrection, "read", async ({ params }) => getCorrection(params.correctionId));
