/**
 * Named crash points (after DBOS's debugpoint): a test arms one, and the process "dies" there.
 *
 * In-process tests cannot kill themselves, so a crash is a `SimulatedCrash` thrown through every
 * layer: the engine never catches it, never records anything after it, and the test then starts a
 * fresh engine on the same store, exactly as a restarted worker would.
 */

/** Every place where the engine can be told to die. */
export const CrashPoint = {
  /** The INTENDED row is committed; the tool has not been called. */
  AFTER_INTENT: "after-intent",
  /** The tool's effect happened; its outcome is not recorded. */
  AFTER_EFFECT: "after-effect",
  /** Reconcile looked the key up and found the effect; nothing is recorded yet. */
  DURING_RECONCILE: "during-reconcile",
  /** The compensation ran in the real system; its request/confirmation is not recorded. */
  MID_COMPENSATION: "mid-compensation",
  /** An unwind settled one row and dies before the next. */
  MID_UNWIND: "mid-unwind",
} as const;

export type CrashPointName = (typeof CrashPoint)[keyof typeof CrashPoint];

/** Thrown to simulate the process dying. Nothing may catch and record it. */
export class SimulatedCrash extends Error {
  constructor(readonly point: string) {
    super(`simulated crash at ${point}`);
    this.name = "SimulatedCrash";
  }
}

/** A set of armed crash points; each fires once, on its `nth` hit (1 by default). */
export class CrashPoints {
  private readonly armed = new Map<string, number>();

  /** Arms `point` to crash on its `nth` hit from now. */
  arm(point: CrashPointName, nth = 1): void {
    this.armed.set(point, nth);
  }

  /** Disarms everything. */
  clear(): void {
    this.armed.clear();
  }

  /** Called by the engine at each named point; throws when that point is armed and due. */
  hit(point: CrashPointName): void {
    const remaining = this.armed.get(point);
    if (remaining === undefined) return;
    if (remaining <= 1) {
      this.armed.delete(point);
      throw new SimulatedCrash(point);
    }
    this.armed.set(point, remaining - 1);
  }
}

/** Crash points that never fire: production's. */
export const noCrashPoints = new CrashPoints();
