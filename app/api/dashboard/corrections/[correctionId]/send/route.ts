import * as api from "@/lib/delivery/contracts/corrections";
import { userRoute } from "@/lib/delivery/user-route";
import { sendCorrection } from "@/lib/desks/corrections/send-correction";

// The server approves and queues the send; the worker (which holds the email credentials) sends it once.
export const POST = userRoute(api.dashboardSendCorrection, "correction.handle", async ({ params, body, user }) => sendCorrection({ actor: user, correctionId: params.correctionId, ...body }));
