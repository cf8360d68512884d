/**
 * Sealing and revealing personal fields for one database (lib/core/privacy/ARCHITECTURE.md): the
 * keyring, the tools' personal-data declarations, the subjects' data keys, and the two walks every
 * writer and reader use (`sealStep`, `reveal`). One vault per Prisma client (`personalDataVault`).
 */
import { Prisma, type PrismaClient } from "@/generated/prisma";
import { rawDriverOf } from "@/lib/core/db/raw-driver";
import { readOnConnection } from "@/lib/core/db/transactions";
import { isUniqueViolation } from "@/lib/core/db/prisma-errors";
import { randomIds } from "@/packages/client/src/saga/ids";
import { resolveMasterKey, type MasterKey } from "./master-key";
import { isSealed, keyFingerprint, newDataKey, openSealed, sealedKeyId, sealValue, subjectHash, unwrapKey, wrapKey, type JsonValue } from "./sealing";

/** Which fields of a tool's calls are personal (the tool table's `personalData`). */
export interface PersonalFields {
  /** The argument naming the person (dotted path); personal itself. */
  subject: string;
  /** Other personal argument fields. */
  args: readonly string[];
  /** Personal result fields. */
  result: readonly string[];
}

/** The `Setting` row holding the keyring. */
export const KEYRING_SETTING = "privacy.keyring";
const HASH_KEY_LABEL = "sagaboard subject-hash key";
/** How long a process trusts a cached data key before asking whether it was erased. */
const KEY_CACHE_MS = 60_000;
/** How long a process trusts the tools' declarations it read (an admin's edit reaches writes within this). */
const SPEC_CACHE_MS = 5_000;
/** Shorter personal strings are not searched for inside other strings (too many false matches). */
const MIN_COPY_LENGTH = 3;

interface StoredKeyring {
  fingerprint: string;
  hashKey: string;
}

/** A live data key. */
interface DataKey {
  id: string;
  key: Buffer;
  loadedAt: number;
}

/** What sealing one step's values needs: the key, and the personal texts to look for in derived copies. */
export interface StepSeal {
  /** The subject key's id. */
  keyId: string;
  /** The personal values as text (found inside compensation, correction and error strings). */
  texts: string[];
}

/** The text of a stored value of a wrong master key, for the error at start. */
export class WrongMasterKey extends Error {}

function getPath(value: unknown, path: string): unknown {
  let v = value;
  for (const part of path.split(".")) v = v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>)[part] : undefined;
  return v;
}

/** A copy of `value` with the field at `path` replaced by `fn(field)` (absent fields stay absent). */
function mapPath(value: JsonValue, path: readonly string[], fn: (v: JsonValue) => JsonValue): JsonValue {
  if (path.length === 0) return fn(value);
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  const [head, ...rest] = path as [string, ...string[]];
  if (!(head in value)) return value;
  return { ...value, [head]: mapPath(value[head] as JsonValue, rest, fn) };
}

/** Every string in `value` mapped by `fn`. */
function mapStrings(value: JsonValue, fn: (s: string) => JsonValue): JsonValue {
  if (typeof value === "string") return fn(value);
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, fn));
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, fn)]));
  return value;
}

/** Collects every sealed string in `value`. */
function sealedStrings(value: unknown, into: Set<string>): void {
  if (isSealed(value)) into.add(value as string);
  else if (Array.isArray(value)) for (const v of value) sealedStrings(v, into);
  else if (value !== null && typeof value === "object" && !(value instanceof Date)) for (const v of Object.values(value)) sealedStrings(v, into);
}

/** Replaces sealed strings found in `value` (objects, arrays, class-free records) by `opened`'s values. */
function replaceSealed<T>(value: T, opened: ReadonlyMap<string, JsonValue>): T {
  if (isSealed(value)) return (opened.has(value as string) ? opened.get(value as string) : "erased") as T;
  if (Array.isArray(value)) return value.map((v) => replaceSealed(v, opened)) as T;
  if (value !== null && typeof value === "object" && !(value instanceof Date) && !Buffer.isBuffer(value)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replaceSealed(v, opened)])) as T;
  }
  return value;
}

/** The words a reader sees in place of an erased field. */
export function erasedOn(at: Date): string {
  return `erased on ${at.toISOString().slice(0, 10)}`;
}

export class PersonalDataVault {
  private keyring: Promise<{ master: Buffer; hashKey: Buffer }> | null = null;
  private specs: { at: number; map: Promise<Map<string, PersonalFields>> } | null = null;
  private readonly liveKeys = new Map<string, DataKey>();
  /** Subjects' keyed hashes this process computed (the hash key never changes, even on rotation). */
  private readonly hashes = new Map<string, string>();

  constructor(
    private readonly prisma: PrismaClient,
    private readonly masterKey: () => MasterKey = resolveMasterKey,
  ) {}

  /**
   * The keyring, created on first use (the master key's fingerprint and a random subject-hash key
   * wrapped by it). A master key that is not the database's is a WrongMasterKey naming both fingerprints.
   */
  loadKeyring(): Promise<{ master: Buffer; hashKey: Buffer }> {
    this.keyring ??= this.readKeyring().catch((e) => {
      this.keyring = null;
      throw e;
    });
    return this.keyring;
  }

  private async readKeyring(): Promise<{ master: Buffer; hashKey: Buffer }> {
    const { key: master, source } = this.masterKey();
    const fingerprint = keyFingerprint(master);
    const read = () => readOnConnection(this.prisma, (db) => db.setting.findUnique({ where: { key: KEYRING_SETTING } }));
    let row = await read();
    if (!row) {
      const stored: StoredKeyring = { fingerprint, hashKey: wrapKey(master, newDataKey(), HASH_KEY_LABEL) };
      try {
        await readOnConnection(this.prisma, (db) => db.setting.create({ data: { key: KEYRING_SETTING, value: stored as unknown as Prisma.InputJsonValue, updatedBy: "system:privacy", updatedAt: new Date() } }));
      } catch (e) {
        if (!isUniqueViolation(e)) throw e;
      }
      row = await read();
    }
    const stored = row!.value as unknown as StoredKeyring;
    if (stored.fingerprint !== fingerprint) {
      throw new WrongMasterKey(
        `The master key from ${source} (fingerprint ${fingerprint}) is not the one this database's personal data is sealed with (fingerprint ${stored.fingerprint}). ` +
          `Point SAGABOARD_MASTER_KEY or SAGABOARD_MASTER_KEY_FILE at the key this database was started with; to change keys, rotate (npm run personal-data -- rotate-master-key) with the old one in place.`,
      );
    }
    return { master, hashKey: unwrapKey(master, stored.hashKey, HASH_KEY_LABEL) };
  }

  /** The keyed hash a subject is stored and erased by. */
  async subjectHashOf(subject: string): Promise<string> {
    return subjectHash((await this.loadKeyring()).hashKey, subject);
  }

  /** The tools' personal-data declarations, read at most every few seconds. */
  async personalFields(tool: string): Promise<PersonalFields | null> {
    const now = Date.now();
    if (!this.specs || now - this.specs.at > SPEC_CACHE_MS) {
      const map = readOnConnection(this.prisma, (db) => db.toolPolicy.findMany({ where: { personalData: { not: Prisma.DbNull } }, select: { name: true, personalData: true } })).then(
        (rows) => new Map(rows.flatMap((r) => (isPersonalFields(r.personalData) ? [[r.name, r.personalData] as const] : []))),
      );
      this.specs = { at: now, map };
      map.catch(() => (this.specs = null));
    }
    return (await this.specs.map).get(tool) ?? null;
  }

  /** Whether any tool declares personal fields (an outcome of a step of an undeclared tool then needs no read). */
  async hasAnyDeclaration(): Promise<boolean> {
    await this.personalFields("");
    return (await this.specs!.map).size > 0;
  }

  /** Forgets what this process cached (after an erasure or an admin's edit in this process). */
  forget(): void {
    this.liveKeys.clear();
    this.specs = null;
  }

  /**
   * The live data key of `subject`, created on first use. The creation is a commit that does not wait
   * for the flush: the intent that uses the key is a flushed commit after it in the same log, which
   * makes it durable too (ARCHITECTURE.md, invariant 5).
   */
  private async keyFor(subject: string): Promise<DataKey> {
    const { master, hashKey } = await this.loadKeyring();
    let hash = this.hashes.get(subject);
    if (hash === undefined) {
      hash = subjectHash(hashKey, subject);
      if (this.hashes.size >= 10_000) this.hashes.clear();
      this.hashes.set(subject, hash);
    }
    const cached = this.liveKeys.get(hash);
    if (cached && Date.now() - cached.loadedAt < KEY_CACHE_MS) return cached;
    const row = await readOnConnection(this.prisma, (db) => db.subjectKey.findFirst({ where: { subjectHash: hash, wrappedKey: { not: null } }, orderBy: { createdAt: "desc" } }));
    let key: DataKey;
    if (row?.wrappedKey) {
      key = { id: row.id, key: unwrapKey(master, row.wrappedKey, row.id), loadedAt: Date.now() };
    } else {
      const id = randomIds.next("sk");
      const dataKey = newDataKey();
      await this.insertKeyUnflushed(id, hash, wrapKey(master, dataKey, id));
      key = { id, key: dataKey, loadedAt: Date.now() };
    }
    this.liveKeys.set(hash, key);
    return key;
  }

  private async insertKeyUnflushed(id: string, hash: string, wrapped: string): Promise<void> {
    const driver = rawDriverOf(this.prisma);
    const now = new Date();
    if (driver?.kind === "sqlite") {
      await driver.exclusive((db) => {
        db.pragma("synchronous = NORMAL");
        try {
          db.prepare(`INSERT INTO "SubjectKey" ("id","subjectHash","wrappedKey","createdAt") VALUES (?,?,?,?)`).run(id, hash, wrapped, now.toISOString().replace("Z", "+00:00"));
        } finally {
          db.pragma("synchronous = FULL");
        }
      });
      return;
    }
    if (driver?.kind === "postgresql") {
      await driver.pool.query(
        `WITH relax AS (SELECT set_config('synchronous_commit', 'off', true) AS c)
         INSERT INTO "SubjectKey" ("id","subjectHash","wrappedKey","createdAt") SELECT $1::text, $2::text, $3::text, $4::timestamp(3) FROM relax`,
        [id, hash, wrapped, now.toISOString()],
      );
      return;
    }
    await this.prisma.subjectKey.create({ data: { id, subjectHash: hash, wrappedKey: wrapped, createdAt: now } });
  }

  /**
   * The seal for a call of `tool` with `args` (null: the tool declares nothing personal). A call that
   * does not name its subject is sealed under a key of its own run (`run:<id>`), erasable by that name.
   */
  async stepSeal(tool: string, args: unknown, runId: string): Promise<{ seal: StepSeal; key: DataKey; fields: PersonalFields } | null> {
    const fields = await this.personalFields(tool);
    if (!fields) return null;
    const named = getPath(args, fields.subject);
    const subject = named === undefined || named === null || named === "" ? `run:${runId}` : typeof named === "string" ? named : JSON.stringify(named);
    const key = await this.keyFor(subject);
    const texts = [fields.subject, ...fields.args]
      .map((p) => getPath(args, p))
      .flatMap((v) => (typeof v === "string" && v.length >= MIN_COPY_LENGTH && !isSealed(v) ? [v] : typeof v === "number" ? [String(v)] : []));
    return { seal: { keyId: key.id, texts }, key, fields };
  }

  /** `args` with the declared fields sealed (already sealed ones stay as they are). */
  sealArgs(args: JsonValue, fields: PersonalFields, key: DataKey): JsonValue {
    let out = args;
    for (const path of new Set([fields.subject, ...fields.args])) out = mapPath(out, path.split("."), (v) => (isSealed(v) ? v : sealValue(key.key, key.id, v)));
    return out;
  }

  /** `result` with the declared fields sealed. */
  sealResult(result: JsonValue, fields: PersonalFields, key: DataKey): JsonValue {
    let out = result;
    for (const path of new Set(fields.result)) out = mapPath(out, path.split("."), (v) => (isSealed(v) ? v : sealValue(key.key, key.id, v)));
    return out;
  }

  /** `value` with every string that contains a personal text sealed whole (a template's copy of `{{to}}`). */
  sealCopies(value: JsonValue, texts: readonly string[], key: DataKey): JsonValue {
    if (texts.length === 0) return value;
    return mapStrings(value, (s) => (!isSealed(s) && texts.some((t) => s.includes(t)) ? sealValue(key.key, key.id, s) : s));
  }

  /** The live data key `keyId` names (for sealing an outcome of a step written earlier). */
  async keyById(keyId: string): Promise<DataKey | null> {
    for (const k of this.liveKeys.values()) if (k.id === keyId && Date.now() - k.loadedAt < KEY_CACHE_MS) return k;
    const { master } = await this.loadKeyring();
    const row = await readOnConnection(this.prisma, (db) => db.subjectKey.findUnique({ where: { id: keyId } }));
    return row?.wrappedKey ? { id: row.id, key: unwrapKey(master, row.wrappedKey, row.id), loadedAt: Date.now() } : null;
  }

  /**
   * `value` with every sealed field opened, or, where its key was destroyed, "erased on <date>" (a
   * key row that is gone reads "erased"). One read of the keys it names; none when nothing is sealed.
   */
  async reveal<T>(value: T): Promise<T> {
    const sealed = new Set<string>();
    sealedStrings(value, sealed);
    if (sealed.size === 0) return value;
    const ids = [...new Set([...sealed].map(sealedKeyId))];
    const { master } = await this.loadKeyring();
    const rows = await readOnConnection(this.prisma, (db) => db.subjectKey.findMany({ where: { id: { in: ids } } }));
    const keys = new Map(rows.map((r) => [r.id, r]));
    const opened = new Map<string, JsonValue>();
    for (const s of sealed) {
      const row = keys.get(sealedKeyId(s));
      if (!row) continue;
      if (!row.wrappedKey) {
        opened.set(s, erasedOn(row.erasedAt ?? new Date(0)));
        continue;
      }
      opened.set(s, openSealed(unwrapKey(master, row.wrappedKey, row.id), s));
    }
    return replaceSealed(value, opened);
  }
}

/** Whether a stored declaration has the shape the vault reads (the tool table validates it on edit). */
export function isPersonalFields(value: unknown): value is PersonalFields & Prisma.JsonObject {
  if (value === null || typeof value !== "object") return false;
  const v = value as Record<string, unknown>;
  return typeof v.subject === "string" && Array.isArray(v.args) && Array.isArray(v.result);
}

/**
 * Kept on the client object under a registered symbol, as the raw driver is (lib/core/db/raw-driver.ts):
 * a Next.js build bundles this module into several chunks that share one client.
 */
const VAULT = Symbol.for("sagaboard.personalDataVault");

/** The vault of `prisma`'s database (one per client). */
export function personalDataVault(prisma: PrismaClient): PersonalDataVault {
  const holder = prisma as unknown as { [VAULT]?: PersonalDataVault };
  if (!holder[VAULT]) Object.defineProperty(holder, VAULT, { value: new PersonalDataVault(prisma), enumerable: false });
  return holder[VAULT]!;
}

/** `value` with its sealed fields opened or marked erased: what every reader shows. */
export function revealPersonal<T>(prisma: PrismaClient, value: T): Promise<T> {
  return personalDataVault(prisma).reveal(value);
}
