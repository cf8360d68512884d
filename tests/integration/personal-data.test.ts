/**
 * Personal data on a real database (SQLite, or PostgreSQL with SAGABOARD_TEST_PG=1), each transition
 * of lib/core/privacy/ARCHITECTURE.md:
 * - the tool table declares which fields are personal: an admin's edit is a version; a team's
 *   declaration is a proposal, never applied to a reviewed row;
 */
import { describe, expect, it, beforeAll } from "vitest";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { seedSupportToolTable } from "@/lib/demo/seed/support-tool-table";
import { getHostedWorld, resetHostedWorld } from "@/lib/demo/sim/host";
import { declareTools } from "@/lib/server/tools/declare-tools";
import { editTool } from "@/lib/server/tools/edit-tool";
import { useTestDatabase } from "../api/api-test-kit";

process.env.SAGABOARD_SIM_SEARCH_LAG_MS = "0";
const getPrisma = useTestDatabase("personal-data");
const admin = { type: "user" as const, id: "admin@example.com" };

beforeAll(async () => {
  resetHostedWorld({ searchLagMs: 0 });
  await seedSupportToolTable(await getPrisma(), createSupportToolRegistry(getHostedWorld()));
});

describe("the tool table declares personal data", () => {
  it("an admin's declaration is a new policy version with its diff in the history", async () => {
    const prisma = await getPrisma();
    const row = await prisma.toolPolicy.findUniqueOrThrow({ where: { name: "create_email_draft" } });
    const edited = await editTool(prisma, { name: row.name, expectedVersion: row.policyVersion, changes: { personalData: { subject: "to", args: ["body"], result: [] } }, reason: "customer emails" }, admin);
    expect(edited.ok).toBe(true);
    if (edited.ok) expect(edited.changed).toEqual(["personal data"]);
    const after = await prisma.toolPolicy.findUniqueOrThrow({ where: { name: row.name } });
    expect(after.policyVersion).toBe(row.policyVersion + 1);
    expect(after.personalData).toEqual({ subject: "to", args: ["body"], result: [] });
    const version = await prisma.toolPolicyVersion.findUniqueOrThrow({ where: { toolName_version: { toolName: row.name, version: after.policyVersion } } });
    expect(version.diff).toEqual({ personalData: { from: null, to: { subject: "to", args: ["body"], result: [] } } });
  });

  it("a malformed declaration is refused naming the field", async () => {
    const prisma = await getPrisma();
    const row = await prisma.toolPolicy.findUniqueOrThrow({ where: { name: "create_email_draft" } });
    await expect(editTool(prisma, { name: row.name, expectedVersion: row.policyVersion, changes: { personalData: { subject: "to; drop", args: [], result: [] } } }, admin)).rejects.toThrow(/dotted path/);
  });

  it("a team's declaration proposes personal fields; a reviewed row keeps its own until an admin accepts", async () => {
    const prisma = await getPrisma();
    const manifest = (personalData?: unknown) => ({ tools: [{ name: "open_case", class: "IRREVERSIBLE", lookup: true, owner: "acme-ops", correction: { subject: "About {{email}}", body: "Sorry." }, argsSchema: { type: "object" }, ...(personalData ? { personalData } : {}) }] });
    await declareTools(prisma, manifest(), { namespace: "acme", actor: { type: "system", id: "acme" } });
    const declared = await prisma.toolPolicy.findUniqueOrThrow({ where: { name: "acme.open_case" } });
    const reviewed = await editTool(prisma, { name: declared.name, expectedVersion: declared.policyVersion, changes: { status: "REVIEWED" } }, admin);
    expect(reviewed.ok).toBe(true);
    await declareTools(prisma, manifest({ subject: "email", args: ["name"], result: ["caseOwner"] }), { namespace: "acme", actor: { type: "system", id: "acme" } });
    const row = await prisma.toolPolicy.findUniqueOrThrow({ where: { name: "acme.open_case" } });
    expect(row.personalData).toBeNull();
    expect(row.proposal).toMatchObject({ personalData: { subject: "email", args: ["name"], result: ["caseOwner"] } });
    const accepted = await editTool(prisma, { name: row.name, expectedVersion: row.policyVersion, changes: {} }, admin, "accept");
    expect(accepted.ok).toBe(true);
    expect((await prisma.toolPolicy.findUniqueOrThrow({ where: { name: row.name } })).personalData).toEqual({ subject: "email", args: ["name"], result: ["caseOwner"] });
  });
});
