import * as api from "@/lib/delivery/contracts/corrections";
import { userRoute } from "@/lib/delivery/user-route";
import { releaseCorrection } from "@/lib/desks/corrections/release-correction";

export const POST = userRoute(api.dashboardReleaseCorrection, "correction.handle", async ({ params, user }) => releaseCorrection({ actor: user, correctionId: params.correctionId }));
