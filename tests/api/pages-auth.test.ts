/**
 * Every page checks who is asking, in the page itself (not only in a proxy/middleware, which
 * CVE-2025-29927 bypassed): a static check that each app/**\/page.tsx except /signin calls
 * requirePageUser before anything else can render. The browser tests (tests/e2e/auth.spec.ts) show
 * what that call does.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { pageAction } from "@/lib/server/auth/page-actions";

/**
 * Pages that need no session: signing in, and why single sign-on refused someone (a page a person
 * without an account must read; it shows only what its signed address carries).
 */
const PUBLIC_PAGES = new Set(["app/signin/page.tsx", "app/signin/refused/page.tsx"]);

function pages(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return name === "api" && dir === "app" ? [] : pages(full);
    return name === "page.tsx" || name === "page.ts" ? [full.split(path.sep).join("/")] : [];
  });
}

describe("pages", () => {
  const all = pages("app");

  it("exist (the scan finds the dashboard)", () => {
    expect(all).toContain("app/signin/page.tsx");
    expect(all.length).toBeGreaterThan(1);
  });

  it.each(all.filter((page) => !PUBLIC_PAGES.has(page)))("%s calls requirePageUser and returns its denial", (page) => {
    const source = readFileSync(page, "utf8");
    expect(source, `${page} must call requirePageUser(...) first`).toMatch(/await requirePageUser\(\s*"[a-z.]+"/);
    expect(source, `${page} must return the 403 content when denied`).toMatch(/if \(denied\) return denied;/);
  });

  it.each(all.filter((page) => !PUBLIC_PAGES.has(page)))("%s needs what the 403 page says it needs (lib/server/auth/page-actions.ts)", (page) => {
    const action = /await requirePageUser\(\s*"([a-z.]+)"/.exec(readFileSync(page, "utf8"))?.[1];
    const route = page.replace(/^app/, "").replace(/\/\([^)]*\)/g, "").replace(/\/page\.tsx?$/, "") || "/";
    expect(pageAction(route), route).toBe(action);
  });
});
