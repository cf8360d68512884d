/**
 * The audit log (app/api/dashboard/audit/**) through its real route handlers on a real database, with
 * the session read through runWithSessionReader: filters and paging give exactly the events the table
 * holds; the CSV and JSON lines exports read back to exactly the filtered events; and tampering with
 * any field of one stored event (or deleting one, or rewriting a whole chain) is found and named,
 * link and chain, and the log verifies again once the row is put back.
 */
import { beforeAll, describe, expect, it } from "vitest";
import * as auditRoute from "@/app/api/dashboard/audit/route";
import * as exportRoute from "@/app/api/dashboard/audit/export/route";
import * as headsRoute from "@/app/api/dashboard/audit/heads/route";
import * as checkRoute from "@/app/api/dashboard/audit/heads/check/route";
import * as verifyRoute from "@/app/api/dashboard/audit/verify/route";
import type { AuditEvent } from "@/generated/prisma";
import { AUDIT_EVENT_COLUMNS } from "@/lib/desks/audit/audit-event-view";
import { type TAuditVerification, type TAuditEventView, type TChainHeadsFile } from "@/lib/desks/audit/views";
import { auditFilterOf, readAuditPage, ZFindAuditEventsRequest } from "@/lib/desks/audit/find-audit-events";
import type { RouteHandler } from "@/lib/delivery/route";
import { runWithSessionReader } from "@/lib/server/auth/current-user";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { chainLink } from "@/lib/core/db/audit-chain";
import { sharedSagaStore } from "@/lib/core/db/prisma-saga-store";
import type { Prisma } from "@/generated/prisma";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import { getHostedWorld } from "@/lib/demo/sim/host";
import { createUser } from "@/lib/server/users/create-user";
import type { TUserView } from "@/lib/server/users/user";
import { parseCsv } from "../support/csv";
import { addSupportTools, call, makeToken, useTestDatabase, type CallResult } from "./api-test-kit";

process.env.SAGABOARD_SIM_SEARCH_LAG_MS = "0";

const getPrisma = useTestDatabase("audit");
const TRICKY_TITLE = 'Refund "order, 2001"\r\nfor Bo; then\nclose';

let viewer: TUserView;
let agentName: string;
let runA: string;
let runB: string;

beforeAll(async () => {
  const prisma = await getPrisma();
  await addSupportTools();
  viewer = await createUser(prisma, { email: "vera-audit@example.com", name: "Vera Viewer", role: "viewer", password: "a long enough password", by: { type: "system", id: "test" } });
  agentName = (await makeToken(["create_email_draft", "create_ticket_draft"], "audit-agent")).name;
  const engine = new SagaEngine({ store: sharedSagaStore(prisma), registry: createSupportToolRegistry(getHostedWorld()), recheckAfterMs: 20, backoffMs: 5 });
  const a = await engine.startRun({ title: TRICKY_TITLE, agent: agentName, onBehalfOf: "bo@example.com" });
  await a.call("create_email_draft", { to: "bo@example.com", subject: "Your refund", body: "Line one,\nline \"two\"." });
  await a.call("create_ticket_draft", { summary: "Refund order 2001", orderId: "2001" });
  await a.call("create_email_draft", { to: "bo@example.com", subject: "Follow-up", body: "Done." });
  const b = await engine.startRun({ title: "Another run", agent: "other-agent", onBehalfOf: "cy@example.com" });
  await b.call("create_ticket_draft", { summary: "Look into order 2002", orderId: "2002" });
  runA = a.runId;
  runB = b.runId;
});

/** Calls `handler` as the viewer (null: signed out), same-origin like the dashboard. */
function asViewer(handler: RouteHandler, path: string, body?: unknown, user: TUserView | null = viewer): Promise<CallResult> {
  return runWithSessionReader(
    async () => user?.id ?? null,
    () => call(handler, path, { method: body === undefined ? "GET" : "POST", body, headers: { origin: "http://localhost" } }),
  );
}

/** Every event the table holds, newest first, as the routes show them. */
async function allEvents(where: Prisma.AuditEventWhereInput = {}): Promise<TAuditEventView[]> {
  const rows = await (await getPrisma()).auditEvent.findMany({ where, orderBy: { id: "desc" } });
  return JSON.parse(JSON.stringify(rows.map((r) => ({ ...r, at: r.at.toISOString() })))) as TAuditEventView[];
}

/** Every page of GET /api/dashboard/audit with `query`, following nextCursor. */
async function pages(query: Record<string, string>): Promise<{ events: TAuditEventView[]; requests: number }> {
  const events: TAuditEventView[] = [];
  let cursor: string | null = null;
  let requests = 0;
  do {
    const qs = new URLSearchParams({ ...query, ...(cursor ? { cursor } : {}) });
    const res = await asViewer(auditRoute.GET, `/api/dashboard/audit?${qs}`);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    events.push(...(res.json.events as TAuditEventView[]));
    cursor = res.json.nextCursor as string | null;
    requests++;
  } while (cursor !== null && requests < 100);
  return { events, requests };
}

async function verify(scope?: string): Promise<TAuditVerification> {
  const res = await asViewer(verifyRoute.GET, `/api/dashboard/audit/verify${scope ? `?scope=${encodeURIComponent(scope)}` : ""}`);
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json as TAuditVerification;
}

describe("finding events", () => {
  it("a run's events, newest first, page by page with no event twice or missed", async () => {
    const expected = await allEvents({ scope: `run:${runA}` });
    expect(expected.map((e) => e.type)).toEqual(["step.confirmed", "step.intended", "step.confirmed", "step.intended", "step.confirmed", "step.intended", "run.started"]);
    const { events, requests } = await pages({ run: runA, take: "2" });
    expect(events).toEqual(expected);
    expect(requests).toBe(4);
    const first = await asViewer(auditRoute.GET, `/api/dashboard/audit?run=${runA}&take=2`);
    expect(first.json).toMatchObject({ scope: `run:${runA}`, searchedBackTo: null });
  });

  it("filters by actor and type prefix, and by time, across the whole log", async () => {
    const all = await allEvents();
    // Each filter below keeps some events and drops others, so an ignored filter fails.
    for (const keep of [(e: TAuditEventView) => e.actor.startsWith("system:"), (e: TAuditEventView) => e.type.startsWith("agent_token."), (e: TAuditEventView) => e.actor === "agent:other-agent"]) {
      expect(all.filter(keep).length).toBeGreaterThan(0);
      expect(all.filter(keep).length).toBeLessThan(all.length);
    }
    expect((await pages({ take: "3" })).events).toEqual(all);
    expect((await pages({ actor: `agent:${agentName}`, take: "4" })).events).toEqual(all.filter((e) => e.actor === `agent:${agentName}`));
    expect((await pages({ actor: "system:" })).events).toEqual(all.filter((e) => e.actor.startsWith("system:")));
    expect((await pages({ type: "step.", take: "5" })).events).toEqual(all.filter((e) => e.type.startsWith("step.")));
    // `_` is a LIKE wildcard and SQLite's LIKE ignores case: neither leaks into the answer.
    expect((await pages({ type: "agent_token." })).events).toEqual(all.filter((e) => e.type.startsWith("agent_token.")));
    expect((await pages({ type: "STEP." })).events).toEqual([]);
    expect((await pages({ type: "step.", actor: "agent:other" })).events).toEqual(all.filter((e) => e.type.startsWith("step.") && e.actor === "agent:other-agent"));

    const middle = all[Math.floor(all.length / 2)]!;
    const at = middle.at;
    expect((await pages({ from: at })).events).toEqual(all.filter((e) => e.at >= at));
    expect((await pages({ to: at })).events).toEqual(all.filter((e) => e.at <= at));
    expect((await pages({ from: at, to: at })).events).toEqual(all.filter((e) => e.at === at));
    const day = at.slice(0, 10);
    expect((await pages({ from: day, to: day })).events).toEqual(all.filter((e) => e.at.startsWith(day)));
    expect((await pages({ to: "2000-01-01" })).events).toEqual([]);
  });

  it("a selective filter searches a bounded window and says how far back it got", async () => {
    const prisma = await getPrisma();
    const all = await allEvents();
    const filter = auditFilterOf(ZFindAuditEventsRequest.parse({ actor: "system:" }));
    const expected = all.filter((e) => e.actor.startsWith("system:"));
    const found: TAuditEventView[] = [];
    let cursor: number | null = null;
    let partial = 0;
    for (let i = 0; i < 100; i++) {
      const page = await readAuditPage(prisma, filter, cursor, 50, 3);
      found.push(...page.events);
      if (page.searchedBackTo) {
        partial++;
        expect(page.events.length).toBeLessThanOrEqual(3);
        expect(page.searchedBackTo.eventId).toBeGreaterThanOrEqual(Number(page.nextCursor));
        expect(page.searchedBackTo.at).toBe(all.find((e) => e.id === page.searchedBackTo!.eventId)?.at);
      }
      if (page.nextCursor === null) break;
      cursor = Number(page.nextCursor);
    }
    expect(found).toEqual(expected);
    expect(partial).toBeGreaterThan(2);
  });

  it("refuses bad filters by name and callers without a session", async () => {
    const bad = await asViewer(auditRoute.GET, "/api/dashboard/audit?from=yesterday&take=9999&run=run_x&scope=user:usr_y");
    expect(bad.status).toBe(400);
    expect(bad.json.error.details.map((d: { path: string }) => d.path).sort()).toEqual(["query.from", "query.scope", "query.take"]);
    const swapped = await asViewer(auditRoute.GET, "/api/dashboard/audit?from=2026-12-02&to=2026-12-01");
    expect(swapped.json.error.details).toEqual([{ path: "query.to", message: "is before from; swap them" }]);
    expect((await asViewer(auditRoute.GET, "/api/dashboard/audit", undefined, null)).status).toBe(401);
    expect((await asViewer(verifyRoute.GET, "/api/dashboard/audit/verify", undefined, null)).status).toBe(401);
    expect((await exportAs(null, "format=csv")).status).toBe(401);
  });
});

function exportAs(user: TUserView | null, query: string): Promise<Response> {
  return runWithSessionReader(
    async () => user?.id ?? null,
    () => exportRoute.GET(new Request(`http://localhost/api/dashboard/audit/export?${query}`), { params: Promise.resolve({}) }),
  );
}

/** An event read back from a CSV record (empty runId/stepId is none; data is JSON). */
function fromCsv(header: string[], record: string[]): TAuditEventView {
  const o = Object.fromEntries(header.map((h, i) => [h, record[i] ?? ""]));
  return {
    id: Number(o.id),
    scope: o.scope!,
    seq: Number(o.seq),
    runId: o.runId || null,
    stepId: o.stepId || null,
    type: o.type!,
    actor: o.actor!,
    data: JSON.parse(o.data!) as TAuditEventView["data"],
    at: o.at!,
    prevHash: o.prevHash!,
    hash: o.hash!,
  };
}

describe("exports", () => {
  it.each([
    ["a run", (a: string) => `run=${a}`, (e: TAuditEventView, a: string) => e.scope === `run:${a}`],
    ["an actor and a type", () => "actor=agent:&type=step.", (e: TAuditEventView) => e.actor.startsWith("agent:") && e.type.startsWith("step.")],
    ["everything", () => "", () => true],
  ])("CSV and JSON lines of %s parse back to exactly the filtered events", async (_what, query, keep) => {
    const expected = (await allEvents()).filter((e) => keep(e, runA));
    expect(expected.length).toBeGreaterThan(0);

    const csv = await exportAs(viewer, `format=csv&${query(runA)}`);
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(csv.headers.get("content-disposition")).toMatch(/^attachment; filename="sagaboard-audit-.*\.csv"$/);
    const [header, ...records] = parseCsv(await csv.text());
    expect(header).toEqual([...AUDIT_EVENT_COLUMNS]);
    expect(records.map((r) => fromCsv(header!, r))).toEqual(expected);

    const jsonl = await exportAs(viewer, `format=jsonl&${query(runA)}`);
    expect(jsonl.headers.get("content-type")).toBe("application/x-ndjson; charset=utf-8");
    const text = await jsonl.text();
    expect(text.endsWith("\n")).toBe(true);
    expect(text.trimEnd().split("\n").map((line) => JSON.parse(line) as TAuditEventView)).toEqual(expected);
  });

  it("keeps quotes, commas and line breaks of the data intact", async () => {
    const csv = await (await exportAs(viewer, `format=csv&run=${runA}&type=run.started`)).text();
    const [header, record] = parseCsv(csv);
    expect((fromCsv(header!, record!).data as { title: string }).title).toBe(TRICKY_TITLE);
  });

  it("refuses an unknown format by name", async () => {
    const res = await exportAs(viewer, "format=xlsx");
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { details: { path: string }[] } }).error.details[0]?.path).toBe("query.format");
  });
});

/** The middle link of run A's chain, as stored. */
async function middleLink(): Promise<AuditEvent> {
  return (await getPrisma()).auditEvent.findUniqueOrThrow({ where: { scope_seq: { scope: `run:${runA}`, seq: 3 } } });
}

describe("tamper evidence", () => {
  it("the log as written verifies: every chain, by kind", async () => {
    const result = await verify();
    const chains = new Set((await allEvents()).map((e) => e.scope));
    expect(result).toMatchObject({ verified: true, chains: chains.size, events: (await allEvents()).length, brokenChains: 0, breaks: [] });
    expect(result.chainsByKind).toMatchObject({ run: 2, user: 1, "agent-token": 1, tool: expect.any(Number) });
    expect(await verify(`run:${runA}`)).toMatchObject({ verified: true, chains: 1, events: 7 });
  });

  const edits: [string, (row: AuditEvent) => Prisma.AuditEventUpdateInput, string][] = [
    ["type", () => ({ type: "step.failed" }), "content"],
    ["actor", () => ({ actor: "user:mallory@example.com" }), "content"],
    ["data", (row) => ({ data: { ...(row.data as object), externalRef: "forged" } }), "content"],
    ["at", (row) => ({ at: new Date(row.at.getTime() - 86_400_000) }), "content"],
    ["stepId", () => ({ stepId: "stp_forged" }), "content"],
    ["runId", () => ({ runId: "run_forged" }), "runId"],
    ["seq", () => ({ seq: 1000 }), "seq"],
    ["prevHash", () => ({ prevHash: "0".repeat(64) }), "prevHash"],
    ["hash", () => ({ hash: "f".repeat(64) }), "hash"],
    ["scope", () => ({ scope: "run:run_elsewhere" }), "scope"],
  ];

  it.each(edits)("an edited %s is reported as exactly that link of that chain, and the restored row verifies", async (field, change, kind) => {
    const prisma = await getPrisma();
    const original = await middleLink();
    const edited = await prisma.auditEvent.update({ where: { id: original.id }, data: change(original) });
    try {
      const result = await verify();
      expect(result.verified).toBe(false);
      expect(result.brokenChains).toBe(1);
      expect(result.breaks).toHaveLength(1);
      expect(result.breaks[0]).toMatchObject({ scope: edited.scope, seq: edited.seq, eventId: original.id, kind, belongsTo: field === "scope" ? `run:${runA}` : null });
      if (field === "at") expect(result.breaks[0]?.message).toContain("the time is the likely change");
      // Verifying the one chain names the same link (a moved link is missing from it instead).
      const own = await verify(`run:${runA}`);
      expect(own.verified).toBe(false);
      expect(own.breaks[0]).toMatchObject(field === "scope" ? { seq: 4, kind: "missing" } : { seq: edited.seq, eventId: original.id, kind });
    } finally {
      const { id: _id, ...columns } = original;
      await prisma.auditEvent.update({ where: { id: original.id }, data: { ...columns, data: original.data as Prisma.InputJsonValue } });
    }
    expect(await verify()).toMatchObject({ verified: true, brokenChains: 0 });
  });

  it("a deleted middle link is found at the link after it", async () => {
    const prisma = await getPrisma();
    const original = await middleLink();
    await prisma.auditEvent.delete({ where: { id: original.id } });
    try {
      const result = await verify();
      expect(result.breaks).toEqual([expect.objectContaining({ scope: `run:${runA}`, seq: 4, kind: "missing" })]);
      expect(result.breaks[0]?.message).toContain("Link 3 is missing");
    } finally {
      await prisma.auditEvent.create({ data: { ...original, data: original.data as Prisma.InputJsonValue } });
    }
    expect((await verify()).verified).toBe(true);
  });

  it("a consistent rewrite of a chain passes verification but not the saved heads; so does a cut and a deletion", async () => {
    const prisma = await getPrisma();
    const saved = await asViewer(headsRoute.GET, "/api/dashboard/audit/heads");
    expect(saved.status).toBe(200);
    const file = saved.json as TChainHeadsFile;
    expect(file.heads.map((h) => h.scope)).toContain(`run:${runA}`);
    expect((await asViewer(checkRoute.POST, "/api/dashboard/audit/heads/check", file)).json).toMatchObject({ matches: true, digestMatches: true, checked: file.chains, changedCount: 0 });

    const chainA = await prisma.auditEvent.findMany({ where: { scope: `run:${runA}` }, orderBy: { seq: "asc" } });
    const chainB = await prisma.auditEvent.findMany({ where: { scope: `run:${runB}` }, orderBy: { seq: "asc" } });
    try {
      // Run A: every link from seq 2 on rewritten with forged data and consistent hashes.
      let last: { seq: number; hash: string } | undefined;
      for (const row of chainA) {
        const data = row.seq >= 2 ? { ...(row.data as object), forged: true } : row.data;
        const link = chainLink(last, { scope: row.scope, runId: row.runId, stepId: row.stepId, type: row.type, actor: row.actor, data: data as never }, row.at);
        await prisma.auditEvent.update({ where: { id: row.id }, data: { data: data as Prisma.InputJsonValue, prevHash: link.prevHash, hash: link.hash } });
        last = { seq: link.seq, hash: link.hash };
      }
      // Run B: its last link deleted; the chain still verifies.
      await prisma.auditEvent.delete({ where: { id: chainB.at(-1)!.id } });
      expect((await verify()).verified).toBe(true);

      const check = await asViewer(checkRoute.POST, "/api/dashboard/audit/heads/check", file);
      expect(check.status).toBe(200);
      expect(check.json).toMatchObject({ matches: false, digestMatches: true, changedCount: 2 });
      const changed = new Map((check.json.changed as { scope: string }[]).map((c) => [c.scope, c]));
      expect(changed.get(`run:${runA}`)).toMatchObject({ change: "rewritten", savedSeq: 7, currentHash: last?.hash });
      expect(changed.get(`run:${runB}`)).toMatchObject({ change: "truncated", savedSeq: 3, currentSeq: 2, message: expect.stringContaining("link 3 was deleted") });

      // A whole chain gone.
      await prisma.auditEvent.deleteMany({ where: { scope: `run:${runB}` } });
      const gone = await asViewer(checkRoute.POST, "/api/dashboard/audit/heads/check", file);
      expect(gone.json.changed).toEqual(expect.arrayContaining([expect.objectContaining({ scope: `run:${runB}`, change: "gone", currentSeq: null })]));
    } finally {
      for (const row of chainA) await prisma.auditEvent.update({ where: { id: row.id }, data: { data: row.data as Prisma.InputJsonValue, prevHash: row.prevHash, hash: row.hash } });
      await prisma.auditEvent.deleteMany({ where: { scope: `run:${runB}` } });
      for (const row of chainB) await prisma.auditEvent.create({ data: { ...row, data: row.data as Prisma.InputJsonValue } });
    }
    expect((await asViewer(checkRoute.POST, "/api/dashboard/audit/heads/check", file)).json).toMatchObject({ matches: true, changedCount: 0 });
    expect((await verify()).verified).toBe(true);
  });

  it("an edited heads file is told apart from a changed log, and a file that is not one is refused by field", async () => {
    const file = (await asViewer(headsRoute.GET, "/api/dashboard/audit/heads")).json as TChainHeadsFile;
    const edited = { ...file, heads: file.heads.map((h, i) => (i === 0 ? { ...h, hash: "a".repeat(64) } : h)) };
    const res = await asViewer(checkRoute.POST, "/api/dashboard/audit/heads/check", edited);
    expect(res.json).toMatchObject({ matches: false, digestMatches: false, changedCount: 1 });

    const wrong = await asViewer(checkRoute.POST, "/api/dashboard/audit/heads/check", { format: "something else", heads: [{ scope: "run:x", seq: 0 }] });
    expect(wrong.status).toBe(400);
    expect(wrong.json.error.details.map((d: { path: string }) => d.path)).toEqual(expect.arrayContaining(["body.format", "body.digest", "body.heads.0.seq", "body.heads.0.hash"]));
    const crossSite = await runWithSessionReader(
      async () => viewer.id,
      () => call(checkRoute.POST, "/api/dashboard/audit/heads/check", { body: file, headers: { origin: "https://evil.example" } }),
    );
    expect(crossSite.status).toBe(403);
  });
});

describe("many chains", () => {
  it("heads and their check page through more chains than one query holds", async () => {
    const prisma = await getPrisma();
    const at = new Date();
    const rows = Array.from({ length: 450 }, (_, i) => chainLink(undefined, { scope: `user:usr_many_${String(i).padStart(3, "0")}`, runId: null, stepId: null, type: "user.created", actor: "system:test", data: { i } }, at));
    await prisma.auditEvent.createMany({ data: rows.map((r) => ({ ...r, data: r.data as Prisma.InputJsonValue })) });
    try {
      const file = (await asViewer(headsRoute.GET, "/api/dashboard/audit/heads")).json as TChainHeadsFile;
      const many = file.heads.filter((h) => h.scope.startsWith("user:usr_many_"));
      expect(many.map((h) => [h.scope, h.seq, h.hash])).toEqual(rows.map((r) => [r.scope, 1, r.hash]));
      expect(file.chains).toBe(new Set((await allEvents()).map((e) => e.scope)).size);
      await prisma.auditEvent.deleteMany({ where: { scope: { in: ["user:usr_many_007", "user:usr_many_401"] } } });
      const check = await asViewer(checkRoute.POST, "/api/dashboard/audit/heads/check", file);
      expect(check.json).toMatchObject({ matches: false, changedCount: 2, matching: file.chains - 2 });
      expect((check.json.changed as { scope: string; change: string }[]).map((c) => [c.scope, c.change])).toEqual([
        ["user:usr_many_007", "gone"],
        ["user:usr_many_401", "gone"],
      ]);
      expect((await verify()).verified).toBe(true);
    } finally {
      await prisma.auditEvent.deleteMany({ where: { scope: { startsWith: "user:usr_many_" } } });
    }
  });
});
