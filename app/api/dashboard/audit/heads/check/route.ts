import * as api from "@/lib/delivery/contracts/audit";
import { uploadRoute } from "@/lib/delivery/audit-route";
import { checkChainHeads, MAX_HEADS_FILE_BYTES } from "@/lib/desks/audit/check-chain-heads";

// Not userRoute: a heads file grows with the number of chains, past userRoute's 1 MiB body limit.
export const POST = uploadRoute(api.dashboardCheckChainHeads, "read", MAX_HEADS_FILE_BYTES, async (file, user) => checkChainHeads({ actor: user, file }));
