/**
 * `npm run bench:pages [-- --runs N --loads N]`: how long a person waits for each screen in a real
 * browser. The built app (`next start`) serves a throwaway SQLite database, the demo's (default) or
 * one generated with N runs (10 steps each on average, bench/lib/generate.ts) plus the demo accounts;
 * Chromium signs in as the demo reviewer and loads every screen `--loads` times warm (default 10,
 * after one load that is not counted), the screens taken in turn so the machine's noise falls on all
 * of them alike, the same server's 404 page among them.
 *
 * "Content visible" is the time from the navigation's start to the first animation frame after the
 * screen's own data is in the document (a selector per screen: the runs table's first row, the run's
 * irreversible metric, the pivot's first plan item...), seen by a MutationObserver installed before
 * the page's first byte, so the probe never polls. Also printed: the JavaScript the page loads
 * (decoded bytes of its scripts) and the document's own server time (its responseStart).
 * Generating 100k runs takes minutes, so `--keep` leaves the database behind (its URL is printed) and
 * `--reuse URL` measures such a SQLite file again (migrated to the current schema first).
 * Writes bench/results/<timestamp>-pages.json. Not part of `npm test`.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chromium, type Page } from "@playwright/test";
import { migrateSqlite } from "@/lib/core/db/migrate";
import { openPrisma } from "@/lib/core/db/prisma";
import { DEMO_PASSWORD, ensureDemoUsers } from "@/lib/server/users/demo-users";
import { fileOf, flag, fmt, hasFlag, percentiles, printTable, throwaway, writeResults, type Percentiles } from "./lib/common";
import { generate } from "./lib/generate";
import { buildIfStale, startApp } from "./lib/http";

const RUNS = flag("runs", 0);
const LOADS = flag("loads", 10);
const PORT = flag("port", 3290);
const KEEP = hasFlag("keep");
const REUSE = process.argv.includes("--reuse") ? process.argv[process.argv.indexOf("--reuse") + 1] : undefined;
const REVIEWER = "reviewer@sagaboard.local";

/** One screen: its address and what shows that its own data is on the page. */
interface Screen {
  name: string;
  path: string;
  /** A CSS selector that matches once the screen's data (or its empty state) is in the document. */
  ready: string;
}

/** Per load, measured in the page (ms since the navigation started). */
interface Load {
  contentMs: number;
  responseStartMs: number;
  /** The document's last byte (a streamed page's end) and when the parser was done with it. */
  responseEndMs: number;
  domInteractiveMs: number;
  htmlKb: number;
  scriptKb: number;
}

// Installed before any page script: watches the document for the screen's selector (handed over in
// sessionStorage, which survives same-tab navigations) and notes the first frame after it matched.
const PROBE = `(() => {
  const selector = sessionStorage.getItem("__benchReady");
  if (!selector) return;
  let seen = false;
  const check = () => {
    if (seen || !document.querySelector(selector)) return;
    seen = true;
    requestAnimationFrame(() => { window.__benchContentAt = performance.now(); });
  };
  new MutationObserver(check).observe(document, { childList: true, subtree: true });
  document.addEventListener("DOMContentLoaded", check);
})();`;

async function load(page: Page, baseUrl: string, screen: Screen): Promise<Load> {
  await page.evaluate((s) => sessionStorage.setItem("__benchReady", s), screen.ready);
  await page.goto(`${baseUrl}${screen.path}`, { waitUntil: "commit" });
  await page.waitForFunction(() => (window as unknown as { __benchContentAt?: number }).__benchContentAt !== undefined, null, { timeout: 30_000, polling: 50 });
  return page.evaluate(() => {
    const nav = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming;
    const scripts = (performance.getEntriesByType("resource") as PerformanceResourceTiming[]).filter((r) => r.initiatorType === "script");
    return {
      contentMs: (window as unknown as { __benchContentAt: number }).__benchContentAt,
      responseStartMs: nav.responseStart,
      responseEndMs: nav.responseEnd,
      domInteractiveMs: nav.domInteractive,
      htmlKb: nav.decodedBodySize / 1024,
      scriptKb: scripts.reduce((sum, r) => sum + r.decodedBodySize, 0) / 1024,
    };
  });
}

/** The screens a reviewer uses, with ids read from the database. */
async function screensOf(url: string): Promise<Screen[]> {
  const prisma = await openPrisma(url);
  try {
    const run = await prisma.run.findFirst({ where: { steps: { some: {} } }, orderBy: { createdAt: "desc" }, select: { id: true } });
    const pivot = (await prisma.pivot.findFirst({ where: { status: "PENDING" }, orderBy: { createdAt: "desc" }, select: { id: true } })) ?? (await prisma.pivot.findFirst({ orderBy: { createdAt: "desc" }, select: { id: true } }));
    if (!run || !pivot) throw new Error("the database has no run with steps or no pivot to measure");
    return [
      { name: "404 page", path: "/no-such-page-for-the-bench", ready: "main h1" },
      { name: "runs list", path: "/runs", ready: "main table tbody tr, main .empty" },
      { name: "run page", path: `/runs/${run.id}`, ready: '[data-testid="irreversible-metric"]' },
      { name: "overview", path: "/overview", ready: "main table" },
      { name: "pivot", path: `/pivots/${pivot.id}`, ready: '[data-testid="plan-item-0"]' },
      { name: "escalations", path: "/escalations", ready: '[data-testid="queue-row"], main .empty' },
      { name: "corrections", path: "/corrections", ready: "main table.queue tbody tr, main .empty" },
      { name: "audit", path: `/audit?run=${encodeURIComponent(run.id)}`, ready: '[data-testid="chain-status"]' },
    ];
  } finally {
    await prisma.$disconnect();
  }
}

/** The demo's database: tool table, demo accounts and the demo runs, as `npm run db:seed` makes them. */
function seedDemo(url: string): void {
  const seeded = spawnSync("npx", ["tsx", "scripts/db-seed.ts"], { env: { ...process.env, DATABASE_URL: url }, encoding: "utf8" });
  if (seeded.status !== 0) throw new Error(`db:seed failed:\n${seeded.stdout}${seeded.stderr}`);
}

async function main(): Promise<void> {
  const built = buildIfStale();
  if (built) console.log(`[bench] built the app (${built})`);
  const db = REUSE ? { url: REUSE, drop: async () => undefined } : await throwaway("sqlite", "pages");
  let app: Awaited<ReturnType<typeof startApp>> | null = null;
  const browser = await chromium.launch({ executablePath: existsSync("/usr/bin/chromium") ? "/usr/bin/chromium" : undefined, args: ["--no-sandbox", "--disable-gpu"] });
  try {
    let data = "the demo's runs";
    if (REUSE) {
      migrateSqlite(fileOf(REUSE));
      data = `the database at ${REUSE}`;
    } else if (RUNS > 0) {
      const g = await generate("sqlite", db.url, RUNS, RUNS * 10);
      const prisma = await openPrisma(db.url);
      await ensureDemoUsers(prisma);
      await prisma.$disconnect();
      data = `${g.runs} generated runs, ${g.steps} steps (generated in ${g.seconds.toFixed(0)} s)`;
    } else {
      seedDemo(db.url);
    }
    const screens = await screensOf(db.url);
    app = await startApp(db.url, PORT);
    const page = await browser.newPage({ viewport: { width: 1366, height: 800 } });
    await page.addInitScript(PROBE);
    await page.goto(`${app.url}/signin`);
    await page.getByLabel("Email").fill(REVIEWER);
    await page.getByLabel("Password").fill(DEMO_PASSWORD);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByTestId("user-menu").waitFor();

    const loads = new Map<string, Load[]>(screens.map((s) => [s.name, []]));
    for (const screen of screens) await load(page, app.url, screen); // warm: first compile, caches, fonts
    for (let round = 0; round < LOADS; round++) {
      // The order rotates each round, so no screen always follows the same one.
      for (let i = 0; i < screens.length; i++) {
        const screen = screens[(i + round) % screens.length]!;
        loads.get(screen.name)!.push(await load(page, app.url, screen));
      }
    }

    const stats = screens.map((s) => {
      const ls = loads.get(s.name)!;
      const p50 = (pick: (l: Load) => number) => percentiles(ls.map(pick)).p50;
      return {
        screen: s.name,
        content: percentiles(ls.map((l) => l.contentMs)),
        server: percentiles(ls.map((l) => l.responseStartMs)),
        responseEndP50: p50((l) => l.responseEndMs),
        domInteractiveP50: p50((l) => l.domInteractiveMs),
        htmlKb: Math.max(...ls.map((l) => l.htmlKb)),
        scriptKb: Math.max(...ls.map((l) => l.scriptKb)),
      };
    });
    const notFound = stats[0]!.content;
    const ratio = (p: Percentiles) => p.p95 / notFound.p95;
    printTable(`Content visible in Chromium, ms from navigation start, ${LOADS} warm loads per screen (${data}; SQLite, next start, 1366 px)`, [
      ["screen", "p50", "p95", "p95 vs 404 page", "first byte p50", "last byte p50", "DOM interactive p50", "HTML KB", "JS KB", "goal"],
      ...stats.map((s) => [
        s.screen,
        fmt(s.content.p50, 0),
        fmt(s.content.p95, 0),
        s.screen === "404 page" ? "1" : fmt(ratio(s.content), 2),
        fmt(s.server.p50, 0),
        fmt(s.responseEndP50, 0),
        fmt(s.domInteractiveP50, 0),
        fmt(s.htmlKb, 0),
        fmt(s.scriptKb, 0),
        s.screen === "404 page" ? "" : "≤ 1.5×",
      ]),
    ]);
    console.log(`wrote ${writeResults("pages", { data, loads: LOADS, db: fileOf(db.url), stats })}`);
  } finally {
    app?.stop();
    await browser.close();
    if (KEEP && !REUSE) console.log(`[bench] kept the database: --reuse ${db.url}`);
    else await db.drop();
  }
}

await main();
