/**
 * Seals the rows written before their tool declared its personal fields (lib/core/privacy/ARCHITECTURE.md):
 * the migration of existing rows. Run after an admin declares a tool's personal fields (edit-tool.ts)
 * and by `npm run personal-data -- seal-existing`. Step rows are not hashed by the audit chain, so
 * sealing them changes no hash; each row's update is fenced on the version it read.
 */
import { Prisma, type PrismaClient } from "@/generated/prisma";
import { readOnConnection } from "@/lib/core/db/transactions";
import { personalDataVault } from "@/lib/core/privacy/personal-data-vault";
import { isSealed, type JsonValue } from "@/lib/core/privacy/sealing";
import { scrubFreedBytes, secureDelete } from "./scrub-freed-bytes";

const BATCH = 500;

function getPath(value: unknown, path: string): unknown {
  return path.split(".").reduce<unknown>((v, part) => (v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>)[part] : undefined), value);
}

/** Seals every step of `tool` (every declared tool when absent) still in clear; returns how many rows it sealed. */
export async function sealExistingSteps(prisma: PrismaClient, tool?: string): Promise<number> {
  const vault = personalDataVault(prisma);
  vault.forget();
  const tools = tool ? [tool] : (await readOnConnection(prisma, (db) => db.toolPolicy.findMany({ where: { personalData: { not: Prisma.DbNull } }, select: { name: true } }))).map((t) => t.name);
  let sealed = 0;
  await secureDelete(prisma, true);
  try {
    sealed = await sealEach(prisma, tools);
  } finally {
    await secureDelete(prisma, false);
  }
  if (sealed > 0) await scrubFreedBytes(prisma);
  return sealed;
}

async function sealEach(prisma: PrismaClient, tools: readonly string[]): Promise<number> {
  const vault = personalDataVault(prisma);
  let sealed = 0;
  for (const name of tools) {
    const fields = await vault.personalFields(name);
    if (!fields) continue;
    let after = "";
    for (;;) {
      const rows = await readOnConnection(prisma, (db) => db.step.findMany({ where: { tool: name, id: { gt: after } }, orderBy: { id: "asc" }, take: BATCH }));
      for (const row of rows) {
        if (isSealed(getPath(row.args, fields.subject))) continue;
        const found = await vault.stepSeal(name, row.args, row.runId);
        if (!found) continue;
        const { key, seal } = found;
        const copies = (v: Prisma.JsonValue | null): Prisma.InputJsonValue | typeof Prisma.DbNull => (v === null ? Prisma.DbNull : (vault.sealCopies(v as JsonValue, seal.texts, key) as Prisma.InputJsonValue));
        const data = {
          args: vault.sealCopies(vault.sealArgs(row.args as JsonValue, fields, key), seal.texts, key) as Prisma.InputJsonValue,
          result: row.result === null ? Prisma.DbNull : (vault.sealCopies(vault.sealResult(row.result as JsonValue, fields, key), seal.texts, key) as Prisma.InputJsonValue),
          error: copies(row.error),
          compensation: copies(row.compensation),
          compensationError: copies(row.compensationError),
          correction: copies(row.correction),
          updatedAt: row.updatedAt, // sealing is not a change of the step
        };
        const { count } = await readOnConnection(prisma, (db) => db.step.updateMany({ where: { id: row.id, updatedAt: row.updatedAt }, data }));
        sealed += count;
      }
      if (rows.length < BATCH) break;
      after = rows.at(-1)!.id;
    }
  }
  return sealed;
}
