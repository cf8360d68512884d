import * as api from "@/lib/api/contracts/corrections";
import { userRoute } from "@/lib/auth/user-route";
import { sendCorrection } from "@/lib/corrections/send-correction";

// The server approves and queues the send; the worker (which holds the email credentials) sends it once.
export const POST = userRoute(api.dashboardSendCorrection, "correction.handle", async ({ params, body }) => sendCorrection(params.correctionId, body));
