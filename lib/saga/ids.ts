import { randomBytes } from "node:crypto";

/** Makes prefixed ids (`run_...`, `stp_...`); tests inject a deterministic one. */
export interface IdGenerator {
  /** A new id with `prefix_`. */
  next(prefix: string): string;
}

/** Time-ordered ids: base36 milliseconds then 10 random base36 characters, easy to read in logs. */
export const randomIds: IdGenerator = {
  next(prefix) {
    const time = Date.now().toString(36).padStart(9, "0");
    const random = BigInt(`0x${randomBytes(8).toString("hex")}`).toString(36).padStart(13, "0").slice(0, 10);
    return `${prefix}_${time}${random}`;
  },
};

/** Sequential ids for tests: `run_1`, `stp_2`, ... */
export function sequentialIds(): IdGenerator {
  let n = 0;
  return { next: (prefix) => `${prefix}_${++n}` };
}
