import * as api from "@/lib/api/contracts/audit";
import { verifyAuditChains } from "@/lib/audit/verify-audit-chains";
import { userRoute } from "@/lib/auth/user-route";

export const GET = userRoute(api.dashboardVerifyAuditChains, "read", async ({ query }) => verifyAuditChains(query));
