/** Time as the engine and the simulated systems see it; tests inject a manual clock. */
export interface Clock {
  /** The current time. */
  now(): Date;
  /** Waits `ms` milliseconds (a manual clock advances instead of waiting). */
  sleep(ms: number): Promise<void>;
}

/** The wall clock. */
export const systemClock: Clock = {
  now: () => new Date(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** A clock that only moves when told to, so lag and pauses are deterministic in tests. */
export class ManualClock implements Clock {
  private current: number;

  constructor(start: Date | number = Date.UTC(2026, 0, 1, 9, 0, 0)) {
    this.current = typeof start === "number" ? start : start.getTime();
  }

  now(): Date {
    return new Date(this.current);
  }

  /** Moves time forward by `ms` milliseconds. */
  advance(ms: number): void {
    this.current += ms;
  }

  async sleep(ms: number): Promise<void> {
    this.advance(ms);
  }
}
