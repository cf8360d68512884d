/**
 * Rotates the master key (lib/core/privacy/ARCHITECTURE.md, "Rotation"): every live data key and the
 * subject-hash key are unwrapped with the current master key and wrapped with the new one, and the
 * keyring's fingerprint replaced, in one transaction. Subject hashes and sealed values do not change.
 */
import type { Prisma, PrismaClient } from "@/generated/prisma";
import { writeTransaction } from "@/lib/core/db/transactions";
import { KEYRING_SETTING, personalDataVault } from "@/lib/core/privacy/personal-data-vault";
import { keyFingerprint, unwrapKey, wrapKey } from "@/lib/core/privacy/sealing";

const HASH_KEY_LABEL = "sagaboard subject-hash key";

/** Re-wraps every key under `newMaster`; returns how many data keys it re-wrapped. The current master key must be the database's. */
export async function rotateMasterKey(prisma: PrismaClient, newMaster: Buffer, by: string): Promise<number> {
  const { master } = await personalDataVault(prisma).loadKeyring();
  const count = await writeTransaction(prisma, async (tx, now) => {
    const setting = await tx.setting.findUniqueOrThrow({ where: { key: KEYRING_SETTING } });
    const stored = setting.value as { fingerprint: string; hashKey: string };
    const hashKey = unwrapKey(master, stored.hashKey, HASH_KEY_LABEL);
    await tx.setting.update({ where: { key: KEYRING_SETTING }, data: { value: { fingerprint: keyFingerprint(newMaster), hashKey: wrapKey(newMaster, hashKey, HASH_KEY_LABEL) } as Prisma.InputJsonValue, updatedBy: by, updatedAt: now } });
    const live = await tx.subjectKey.findMany({ where: { wrappedKey: { not: null } } });
    for (const k of live) await tx.subjectKey.update({ where: { id: k.id }, data: { wrappedKey: wrapKey(newMaster, unwrapKey(master, k.wrappedKey!, k.id), k.id) } });
    return live.length;
  });
  personalDataVault(prisma).forget();
  return count;
}
