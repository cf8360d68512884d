/**
 * Collapses concurrent callers of one read into as few reads as freshness allows. A caller never gets
 * the result of a read that began before it asked: it joins the read queued to start when the one
 * running now ends, so what it committed before asking is in what it gets. Sixteen readers arriving
 * together thus cost two reads (the running one and the queued one), not sixteen.
 *
 * For reads whose answer is the same for every caller (the dashboard's "what waits for people"
 * counts, the overview). A failed read fails every caller that joined it, and the next caller starts afresh.
 */
export class SharedRead<T> {
  private running: Promise<T> | null = null;
  private queued: Promise<T> | null = null;

  constructor(private readonly read: () => Promise<T>) {}

  /** The result of a read that starts no earlier than this call. */
  get(): Promise<T> {
    if (this.queued) return this.queued;
    const running = this.running;
    if (!running) return this.start();
    const queued = running.then(
      () => undefined,
      () => undefined,
    ).then(() => {
      this.queued = null;
      return this.start();
    });
    this.queued = queued;
    return queued;
  }

  private start(): Promise<T> {
    const run: Promise<T> = this.read().finally(() => {
      if (this.running === run) this.running = null;
    });
    this.running = run;
    return run;
  }
}

/** One SharedRead per key (a database client, say), dropped with the key. */
export function sharedReadPer<K extends object, T>(read: (key: K) => Promise<T>): (key: K) => Promise<T> {
  const reads = new WeakMap<K, SharedRead<T>>();
  return (key) => {
    let shared = reads.get(key);
    if (!shared) {
      shared = new SharedRead(() => read(key));
      reads.set(key, shared);
    }
    return shared.get();
  };
}
