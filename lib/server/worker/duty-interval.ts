/** How often a background duty of the app process runs, read from its environment variable. */

/**
 * The interval `name` sets (whole milliseconds, at least 100), `fallback` when unset, or null when
 * it is 0 (the duty is off in this process). Anything else is refused with what was wrong.
 */
export function dutyEveryMs(name: string, fallback: number, env: Record<string, string | undefined> = process.env): number | null {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (value === 0) return null;
  if (!Number.isInteger(value) || value < 100) {
    throw new Error(`${name} must be a whole number of milliseconds of at least 100, or 0 to turn this duty off here (got "${raw}").`);
  }
  return value;
}
