import * as api from "@/lib/api/contracts/corrections";
import { userRoute } from "@/lib/auth/user-route";
import { releaseCorrection } from "@/lib/corrections/release-correction";

export const POST = userRoute(api.dashboardReleaseCorrection, "correction.handle", async ({ params }) => releaseCorrection(params.correctionId));
