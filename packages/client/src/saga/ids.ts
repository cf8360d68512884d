import { randomFillSync } from "node:crypto";

// Random bytes are drawn 4 KiB at a time: one call into the system's generator per 512 ids, not per id.
const pool = Buffer.alloc(4096);
let used = pool.length;

function random64(): bigint {
  if (used + 8 > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  const value = pool.readBigUInt64BE(used);
  used += 8;
  return value;
}

/** Makes prefixed ids (`run_...`, `stp_...`); tests inject a deterministic one. */
export interface IdGenerator {
  /** A new id with `prefix_`. */
  next(prefix: string): string;
}

/** Time-ordered ids: base36 milliseconds then 10 random base36 characters, easy to read in logs. */
export const randomIds: IdGenerator = {
  next(prefix) {
    const time = Date.now().toString(36).padStart(9, "0");
    const random = random64().toString(36).padStart(13, "0").slice(0, 10);
    return `${prefix}_${time}${random}`;
  },
};

/** Sequential ids for tests: `run_1`, `stp_2`, ... */
export function sequentialIds(): IdGenerator {
  let n = 0;
  return { next: (prefix) => `${prefix}_${++n}` };
}
