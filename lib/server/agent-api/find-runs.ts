/**
 * The calling agent's runs, newest first, paged by id cursor: one query for the page, whatever its
 * size (it had read each run again by id, one query per run).
 */
import { toRunRecord } from "@/lib/core/db/saga-rows";
import type { RunRecord } from "@/packages/client/src/saga/store";
import type { RunStatus } from "@/packages/client/src/saga/vocabulary";
import type { AgentCaller } from "./agent-access";

export async function findRunsForAgent({
  prisma,
  principal,
  page,
}: AgentCaller & { page: { cursor?: string; take: number; status?: RunStatus } }): Promise<{ runs: RunRecord[]; nextCursor: string | null }> {
  const rows = await prisma.run.findMany({
    where: { agent: principal.name, ...(page.status ? { status: page.status } : {}) },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: page.take + 1,
    ...(page.cursor ? { cursor: { id: page.cursor }, skip: 1 } : {}),
  });
  const runs = rows.slice(0, page.take).map(toRunRecord);
  return { runs, nextCursor: rows.length > page.take ? (runs.at(-1)?.id ?? null) : null };
}
