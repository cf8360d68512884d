import * as api from "@/lib/delivery/contracts/corrections";
import { userRoute } from "@/lib/delivery/user-route";
import { dismissCorrection } from "@/lib/desks/corrections/dismiss-correction";

export const POST = userRoute(api.dashboardDismissCorrection, "correction.handle", async ({ params, body, user }) => dismissCorrection({ actor: user, correctionId: params.correctionId, ...body }));
