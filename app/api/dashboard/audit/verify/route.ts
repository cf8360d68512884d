import * as api from "@/lib/delivery/contracts/audit";
import { verifyAuditChains } from "@/lib/desks/audit/verify-audit-chains";
import { userRoute } from "@/lib/delivery/user-route";

export const GET = userRoute(api.dashboardVerifyAuditChains, "read", async ({ query, user }) => verifyAuditChains({ actor: user, ...query }));
