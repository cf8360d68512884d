import * as api from "@/lib/delivery/contracts/corrections";
import { userRoute } from "@/lib/delivery/user-route";
import { editCorrection } from "@/lib/desks/corrections/edit-correction";

export const POST = userRoute(api.dashboardEditCorrection, "correction.handle", async ({ params, body, user }) => editCorrection({ actor: user, correctionId: params.correctionId, ...body }));
