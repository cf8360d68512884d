/** The calling agent's runs, newest first, paged by id cursor. */
import type { RunRecord } from "@/lib/saga/store";
import type { RunStatus } from "@/lib/saga/vocabulary";
import { agentApiStore, type AgentCaller } from "./agent-access";

export async function findRunsForAgent({
  prisma,
  principal,
  page,
}: AgentCaller & { page: { cursor?: string; take: number; status?: RunStatus } }): Promise<{ runs: RunRecord[]; nextCursor: string | null }> {
  const store = agentApiStore(prisma);
  const rows = await prisma.run.findMany({
    where: { agent: principal.name, ...(page.status ? { status: page.status } : {}) },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: page.take + 1,
    ...(page.cursor ? { cursor: { id: page.cursor }, skip: 1 } : {}),
    select: { id: true },
  });
  const runs: RunRecord[] = [];
  for (const row of rows.slice(0, page.take)) {
    const run = await store.getRun(row.id);
    if (run) runs.push(run);
  }
  return { runs, nextCursor: rows.length > page.take ? (rows[page.take - 1]?.id ?? null) : null };
}
