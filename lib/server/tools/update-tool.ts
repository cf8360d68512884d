/** The signed-in admin's edit of a tool's row: the desk's use case over `editTool` (edit-tool.ts). */
import { userActor, type PersonRequest } from "@/lib/server/auth/current-user";
import { assertCan } from "@/lib/server/auth/roles";
import { getPrisma } from "@/lib/core/db/prisma";
import { editTool, type TUpdateToolRequest } from "./edit-tool";
import type { TToolEditResult } from "./views";

/** The signed-in admin edits a tool's row (see `editTool`). */
export async function updateTool({ actor, ...request }: PersonRequest<TUpdateToolRequest>): Promise<TToolEditResult> {
  assertCan(actor, "tools.edit");
  return editTool(await getPrisma(), request, userActor(actor));
}

