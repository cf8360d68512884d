/** The signed-in admin's decision on a tool's proposal: the desk's use case over `settleToolProposal`. */
import { userActor, type PersonRequest } from "@/lib/server/auth/current-user";
import { assertCan } from "@/lib/server/auth/roles";
import { getPrisma } from "@/lib/core/db/prisma";
import { settleToolProposal, type TDecideToolProposalRequest } from "./settle-tool-proposal";
import type { TToolEditResult } from "./views";

/** The signed-in admin decides a tool's proposal (see `settleToolProposal`). */
export async function decideToolProposal({ actor, ...request }: PersonRequest<TDecideToolProposalRequest>): Promise<TToolEditResult> {
  assertCan(actor, "tools.edit");
  return settleToolProposal(await getPrisma(), request, userActor(actor));
}

