import * as api from "@/lib/delivery/contracts/notifications";
import { userRoute } from "@/lib/delivery/user-route";
import { getOperations } from "@/lib/desks/operations/get-operations";

export const GET = userRoute(api.adminGetOperations, "users.manage", async ({ user }) => getOperations({ actor: user }));
