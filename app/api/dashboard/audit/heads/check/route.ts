import * as api from "@/lib/api/contracts/audit";
import { uploadRoute } from "@/lib/audit/audit-route";
import { checkChainHeads, MAX_HEADS_FILE_BYTES } from "@/lib/audit/check-chain-heads";

// Not userRoute: a heads file grows with the number of chains, past userRoute's 1 MiB body limit.
export const POST = uploadRoute(api.dashboardCheckChainHeads, "read", MAX_HEADS_FILE_BYTES, async (file) => checkChainHeads(file));
