import { describe, expect, it } from "vitest";
import { SharedRead, sharedReadPer } from "./shared-read";

/** A read whose calls the test settles by hand, counting how many began. */
function manualRead() {
  const calls: { resolve: (v: number) => void; reject: (e: Error) => void; version: number }[] = [];
  let version = 0;
  return {
    calls,
    bump: () => (version += 1),
    read: () =>
      new Promise<number>((resolve, reject) => {
        calls.push({ resolve, reject, version });
      }),
  };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe("SharedRead", () => {
  it("a lone caller starts a read of its own", async () => {
    const m = manualRead();
    const shared = new SharedRead(m.read);
    const a = shared.get();
    expect(m.calls).toHaveLength(1);
    m.calls[0]!.resolve(1);
    expect(await a).toBe(1);
  });

  it("callers arriving while a read runs share one read that starts after it, never the running one", async () => {
    const m = manualRead();
    const shared = new SharedRead(m.read);
    const first = shared.get();
    await tick();
    m.bump(); // something committed after the first read began: the later callers must see it
    const later = Array.from({ length: 15 }, () => shared.get());
    await tick();
    expect(m.calls).toHaveLength(1); // the queued read waits for the running one
    m.calls[0]!.resolve(m.calls[0]!.version);
    expect(await first).toBe(0);
    await tick();
    expect(m.calls).toHaveLength(2);
    expect(m.calls[1]!.version).toBe(1); // began after the bump
    m.calls[1]!.resolve(m.calls[1]!.version);
    expect(await Promise.all(later)).toEqual(Array(15).fill(1));
    // Idle again: the next caller starts a new read.
    const next = shared.get();
    expect(m.calls).toHaveLength(3);
    m.calls[2]!.resolve(7);
    expect(await next).toBe(7);
  });

  it("a failed read fails the callers that joined it, and the next caller reads afresh", async () => {
    const m = manualRead();
    const shared = new SharedRead(m.read);
    const a = shared.get();
    const b = shared.get(); // queued behind a
    m.calls[0]!.reject(new Error("connection lost"));
    await expect(a).rejects.toThrow("connection lost");
    await tick();
    m.calls[1]!.reject(new Error("still down"));
    await expect(b).rejects.toThrow("still down");
    const c = shared.get();
    expect(m.calls).toHaveLength(3);
    m.calls[2]!.resolve(3);
    expect(await c).toBe(3);
  });

  it("sharedReadPer keeps one shared read per key", async () => {
    const seen: string[] = [];
    const read = sharedReadPer(async (key: { name: string }) => {
      seen.push(key.name);
      return key.name.length;
    });
    const x = { name: "x" };
    const yy = { name: "yy" };
    expect(await Promise.all([read(x), read(yy), read(x)])).toEqual([1, 2, 1]);
    expect(seen).toEqual(["x", "yy", "x"]); // x's second caller joined the read queued behind its first
  });
});
