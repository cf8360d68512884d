/**
 * What the saga store seals on its way to the database and opens on its way back
 * (lib/core/privacy/ARCHITECTURE.md, invariants 1 and 3): a step's declared argument and result
 * fields, and every string of its compensation, correction and errors that copies one of them.
 * The store's records stay in clear for the process that holds them; only rows are sealed.
 */
import type { PrismaClient } from "@/generated/prisma";
import { readOnConnection } from "@/lib/core/db/transactions";
import { Recent } from "@/lib/core/db/step-log-sql";
import type { NewIntent, PlanItem, StepPatch } from "@/packages/client/src/saga/store";
import type { Json } from "@/packages/client/src/saga/tools";
import { personalDataVault, type PersonalDataVault, type PersonalFields } from "./personal-data-vault";
import { isSealed, sealedKeyId, type JsonValue } from "./sealing";

/** What this process knows of a step it sealed: the key, the personal texts, and the sealed values it wrote. */
interface StepSealState {
  fields: PersonalFields;
  keyId: string;
  texts: string[];
  /** Sealed value -> the value in clear, for the record handed back (no key read). */
  opened: Map<string, JsonValue>;
}

/** A sealed copy of a store write, and how to give its record back in clear. */
export interface Sealed<T> {
  /** What is written. */
  value: T;
  /** Sealed value -> value in clear, for what the write returns. */
  opened: ReadonlyMap<string, JsonValue>;
}

/** Replaces the sealed strings `opened` knows (the rest stay sealed, for `reveal`). */
export function openKnown<T>(value: T, opened: ReadonlyMap<string, JsonValue>): T {
  if (opened.size === 0) return value;
  if (typeof value === "string") return (opened.has(value) ? opened.get(value) : value) as T;
  if (Array.isArray(value)) return value.map((v) => openKnown(v, opened)) as T;
  if (value !== null && typeof value === "object" && !(value instanceof Date)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, openKnown(v, opened)])) as T;
  return value;
}

/** Records each sealed string of `after` whose place held `before` (same shape, strings replaced). */
function noteOpened(before: JsonValue | undefined, after: JsonValue | undefined, opened: Map<string, JsonValue>): void {
  if (typeof after === "string" && isSealed(after) && before !== after && before !== undefined) {
    opened.set(after, before);
    return;
  }
  if (Array.isArray(after) && Array.isArray(before)) after.forEach((a, i) => noteOpened(before[i], a, opened));
  else if (after !== null && typeof after === "object" && !Array.isArray(after) && before !== null && typeof before === "object" && !Array.isArray(before)) {
    for (const [k, a] of Object.entries(after)) noteOpened((before as Record<string, JsonValue>)[k], a, opened);
  }
}

/** Seals one step's writes for one database. */
export class StepSealer {
  private readonly vault: PersonalDataVault;
  /** Steps this process sealed or looked up (null: the step's tool declares nothing personal). */
  private readonly steps = new Recent<StepSealState | null>(50_000);

  constructor(private readonly prisma: PrismaClient) {
    this.vault = personalDataVault(prisma);
  }

  /** The vault (reveal, keys). */
  get personalData(): PersonalDataVault {
    return this.vault;
  }

  /** An intent with its personal fields sealed (unchanged when its tool declares none). */
  async sealIntent(intent: NewIntent): Promise<Sealed<NewIntent>> {
    const found = await this.vault.stepSeal(intent.tool, intent.args, intent.runId);
    if (!found) {
      this.steps.set(intent.id, null);
      return { value: intent, opened: new Map() };
    }
    const { key, fields, seal } = found;
    const opened = new Map<string, JsonValue>();
    const args = this.vault.sealCopies(this.vault.sealArgs(intent.args as JsonValue, fields, key), seal.texts, key);
    noteOpened(intent.args as JsonValue, args, opened);
    const copies = (v: JsonValue | null) => (v === null ? null : this.vault.sealCopies(v, seal.texts, key));
    const compensation = intent.compensation ? { ...intent.compensation, args: copies(intent.compensation.args as JsonValue) as Json } : null;
    if (intent.compensation && compensation) noteOpened(intent.compensation.args as JsonValue, compensation.args as JsonValue, opened);
    const correction = intent.correction ? { ...intent.correction, subject: copies(intent.correction.subject) as string, body: copies(intent.correction.body) as string } : null;
    if (intent.correction && correction) {
      noteOpened(intent.correction.subject, correction.subject, opened);
      noteOpened(intent.correction.body, correction.body, opened);
    }
    this.steps.set(intent.id, { fields, keyId: key.id, texts: seal.texts, opened });
    return { value: { ...intent, args: args as Json, compensation, correction }, opened };
  }

  /** What this process knows of a step's seal, reading the step once when it does not. */
  private async stateOf(stepId: string): Promise<StepSealState | null> {
    const known = this.steps.get(stepId);
    if (known !== undefined) return known;
    const row = await readOnConnection(this.prisma, (db) => db.step.findUnique({ where: { id: stepId }, select: { tool: true, args: true } }));
    const fields = row ? await this.vault.personalFields(row.tool) : null;
    if (!row || !fields) {
      if (row) this.steps.set(stepId, null);
      return null;
    }
    const subject = fields.subject.split(".").reduce<unknown>((v, part) => (v !== null && typeof v === "object" ? (v as Record<string, unknown>)[part] : undefined), row.args);
    if (!isSealed(subject)) return null; // written before the tool declared it: the migration seals it
    const args = (await this.vault.reveal(row.args)) as JsonValue;
    const texts = [fields.subject, ...fields.args]
      .map((p) => p.split(".").reduce<unknown>((v, part) => (v !== null && typeof v === "object" ? (v as Record<string, unknown>)[part] : undefined), args))
      .flatMap((v) => (typeof v === "string" && v.length >= 3 && !v.startsWith("erased") ? [v] : []));
    const state = { fields, keyId: sealedKeyId(subject as string), texts, opened: new Map<string, JsonValue>() };
    this.steps.set(stepId, state);
    return state;
  }

  /**
   * A pivot's plan with each item's personal arguments sealed under its subject's key, and `extra`
   * (a plan edit's history, an audit event's data) with every copy of them sealed too.
   */
  async sealPlan<E>(runId: string, plan: readonly PlanItem[], extra?: E): Promise<Sealed<PlanItem[]> & { extra: E | undefined }> {
    const opened = new Map<string, JsonValue>();
    let sealedExtra = extra as JsonValue | undefined;
    const items: PlanItem[] = [];
    for (const item of plan) {
      const found = await this.vault.stepSeal(item.tool, item.args, runId);
      if (!found) {
        items.push(item);
        continue;
      }
      const args = this.vault.sealCopies(this.vault.sealArgs(item.args as JsonValue, found.fields, found.key), found.seal.texts, found.key);
      noteOpened(item.args as JsonValue, args, opened);
      if (sealedExtra !== undefined) sealedExtra = this.vault.sealCopies(sealedExtra, found.seal.texts, found.key);
      items.push({ ...item, args: args as Json });
    }
    if (extra !== undefined && sealedExtra !== undefined) noteOpened(extra as JsonValue, sealedExtra, opened);
    return { value: items, opened, extra: sealedExtra as E | undefined };
  }

  /** Audit data of a step's transition with every copy of the step's personal values sealed (a compensation plan in `compensation.requested`). */
  async sealAuditData(stepId: string, data: Json | undefined): Promise<Json | undefined> {
    if (data === undefined || data === null || !(await this.vault.hasAnyDeclaration())) return data;
    const state = await this.stateOf(stepId);
    if (!state || state.texts.length === 0) return data;
    const key = await this.vault.keyById(state.keyId);
    return key ? (this.vault.sealCopies(data as JsonValue, state.texts, key) as Json) : data;
  }

  /** A step transition with its personal fields sealed (result fields, and copies in errors, compensation, correction). */
  async sealPatch(stepId: string, patch: StepPatch): Promise<Sealed<StepPatch>> {
    const touches = patch.result != null || patch.error != null || patch.compensation != null || patch.correction != null || patch.compensationError != null || patch.args !== undefined;
    // What this process sealed for the step opens the record handed back without reading a key.
    const known = this.steps.get(stepId)?.opened ?? new Map<string, JsonValue>();
    if (!touches || !(await this.vault.hasAnyDeclaration())) return { value: patch, opened: known };
    const state = await this.stateOf(stepId);
    if (!state) return { value: patch, opened: new Map() };
    const key = await this.vault.keyById(state.keyId);
    if (!key) return { value: patch, opened: new Map() }; // erased: nothing new is written in clear or under a dead key's name
    const opened = new Map<string, JsonValue>();
    const out: StepPatch = { ...patch };
    const copies = (v: JsonValue) => this.vault.sealCopies(v, state.texts, key);
    if (patch.args !== undefined) out.args = copies(this.vault.sealArgs(patch.args as JsonValue, state.fields, key)) as Json;
    if (patch.result != null) out.result = copies(this.vault.sealResult(patch.result as JsonValue, state.fields, key)) as Json;
    if (patch.error != null) out.error = copies(patch.error as JsonValue) as Json;
    if (patch.compensationError != null) out.compensationError = copies(patch.compensationError as JsonValue) as Json;
    if (patch.compensation != null) out.compensation = { ...patch.compensation, args: copies(patch.compensation.args as JsonValue) as Json };
    if (patch.correction != null) out.correction = { ...patch.correction, subject: copies(patch.correction.subject) as string, body: copies(patch.correction.body) as string };
    noteOpened(patch as unknown as JsonValue, out as unknown as JsonValue, opened);
    for (const [k, v] of state.opened) opened.set(k, v);
    return { value: out, opened };
  }

  /** A record read back, in clear: what this write sealed is known, the rest is revealed (one key read, if any). */
  async openRecord<T>(value: T, opened: ReadonlyMap<string, JsonValue>): Promise<T> {
    return this.vault.reveal(openKnown(value, opened));
  }
}

