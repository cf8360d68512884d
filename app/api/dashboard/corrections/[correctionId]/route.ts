import * as api from "@/lib/delivery/contracts/corrections";
import { userRoute } from "@/lib/delivery/user-route";
import { getCorrection } from "@/lib/desks/corrections/get-correction";

export const GET = userRoute(api.dashboardGetCorrection, "read", async ({ params, user }) => getCorrection({ actor: user, correctionId: params.correctionId }));
