/**
 * Playwright fixtures for Sagaboard: a client on the e2e database (the SQLite file or the PostgreSQL
 * database the server uses, named by DATABASE_URL, which playwright.config.ts sets), `seedUser(role)` creating a uniquely named account
 * through the same lib function the CLI and the admin screen use, and `signIn(page, user)`.
 *
 * Tests never delete shared data: each one seeds what it needs under names nobody else uses.
 */
import { randomBytes } from "node:crypto";
import path from "node:path";
import { test as base, expect, type Page } from "@playwright/test";
import type { Role } from "@/lib/server/auth/roles";
import { openPrisma, type PrismaClient } from "@/lib/core/db/prisma";
import { createUser } from "@/lib/server/users/create-user";
import type { TUserView } from "@/lib/server/users/user";
import { testStoreKind } from "../support/test-database";

/**
 * Where tests save the screenshots a person should look at: test-results/screenshots/<name>.png on
 * SQLite, test-results/screenshots/pg/<name>.png on PostgreSQL (`npm test` runs both, one after the other).
 */
export function screenshotPath(name: string): string {
  return path.join("test-results", "screenshots", ...(testStoreKind() === "postgresql" ? ["pg"] : []), `${name}.png`);
}

/**
 * Screenshots the page at desktop width and at 390 px (a phone), for a person to look at, and fails
 * when the phone view scrolls sideways; leaves the page at desktop width.
 */
export async function shootBothWidths(page: Page, name: string, desktopWidth = 1366): Promise<void> {
  await page.setViewportSize({ width: desktopWidth, height: 900 });
  await page.screenshot({ path: screenshotPath(`${name}-${desktopWidth}`), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForTimeout(150);
  await page.screenshot({ path: screenshotPath(`${name}-390`), fullPage: true });
  expect(await page.evaluate(() => document.documentElement.scrollWidth), `${name} scrolls sideways at 390 px`).toBeLessThanOrEqual(390);
  await page.setViewportSize({ width: desktopWidth, height: 900 });
}

/** A seeded account and its password (known only to the test). */
export interface SeededUser extends TUserView {
  /** The plain password, for signing in. */
  password: string;
}

/** Options of `seedUser`. */
export interface SeedUserOptions {
  /** Display name (default: "E2E <Role> <n>"). */
  name?: string;
}

/** Fixtures every e2e test can ask for. */
export interface SagaboardFixtures {
  /** Creates an enabled account with `role`, a unique email and a random password. */
  seedUser: (role: Role, options?: SeedUserOptions) => Promise<SeededUser>;
}

/** Worker-wide fixtures. */
export interface SagaboardWorkerFixtures {
  /** A Prisma client on the e2e database, for seeding and for asserting persisted rows. */
  db: PrismaClient;
}

let seeded = 0;

export const test = base.extend<SagaboardFixtures, SagaboardWorkerFixtures>({
  db: [
    // eslint-disable-next-line no-empty-pattern -- Playwright reads the fixture's dependencies from this pattern
    async ({}, use) => {
      if (!process.env.DATABASE_URL) throw new Error("DATABASE_URL is not set; run the e2e tests through playwright.config.ts.");
      const prisma = await openPrisma(process.env.DATABASE_URL);
      await use(prisma);
      await prisma.$disconnect();
    },
    { scope: "worker" },
  ],
  seedUser: async ({ db }, use, testInfo) => {
    await use(async (role, options = {}) => {
      const n = ++seeded;
      // Unique across workers, retries and runs against the same file.
      const tag = `${Date.now().toString(36)}-${testInfo.workerIndex}-${n}-${randomBytes(3).toString("hex")}`;
      const password = `pw-${randomBytes(12).toString("base64url")}`;
      const label = role.charAt(0).toUpperCase() + role.slice(1);
      const user = await createUser(db, {
        email: `e2e-${role}-${tag}@sagaboard.test`,
        name: options.name ?? `E2E ${label} ${n}`,
        role,
        password,
        by: { type: "system", id: "e2e" },
      });
      return { ...user, password };
    });
  },
});

export { expect };

/**
 * Signs in through the sign-in form and waits until a signed-in page shows the user menu.
 * Starts from `/signin?callbackUrl=...` when `returnTo` is given.
 */
export async function signIn(page: Page, user: { email: string; password: string }, returnTo?: string): Promise<void> {
  await page.goto(returnTo ? `/signin?callbackUrl=${encodeURIComponent(returnTo)}` : "/signin");
  await page.getByLabel("Email").fill(user.email);
  await page.getByLabel("Password").fill(user.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page.getByTestId("user-menu")).toBeVisible();
}
