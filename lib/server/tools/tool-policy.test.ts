import { describe, expect, it } from "vitest";
import { buildCompensationArgs, checkToolPolicy, diffFields, fillTemplate, type TToolPolicyFields } from "./tool-policy";
import { ToolStatus } from "@/packages/client/src/saga/vocabulary";

const charge: TToolPolicyFields = {
  toolClass: "COMPENSATABLE",
  compensator: "refund_charge",
  undoMechanism: "Refund the charge",
  owner: "payments-team",
  revocationWindowSec: 24 * 3600,
  keyRetentionSec: 24 * 3600,
  audienceRule: "finance",
  revokeRoles: ["admin", "reviewer"],
  alwaysRequireApproval: false,
  correctionSubject: null,
  correctionBody: null,
  description: null,
  status: ToolStatus.REVIEWED,
};
const connectors = { lookupAvailable: true, compensators: ["refund_charge", "close_ticket"] };
const paths = (next: TToolPolicyFields, current: TToolPolicyFields | null = charge, facts = connectors) => checkToolPolicy("charge_card", next, current, facts).issues.map((i) => i.path);

describe("checkToolPolicy", () => {
  it("accepts the row as the connector registered it", () => {
    expect(checkToolPolicy("charge_card", charge, null, connectors)).toEqual({ issues: [], warnings: [] });
  });

  it("refuses a compensator no connector registers, naming the ones that exist", () => {
    const check = checkToolPolicy("charge_card", { ...charge, compensator: "void_charge" }, charge, connectors);
    expect(check.issues).toEqual([{ path: "compensator", message: expect.stringContaining('"void_charge"') }]);
    expect(check.issues[0]?.message).toContain("refund_charge, close_ticket");
  });

  it("refuses a releasable class without a compensator, and a logged class without a lookup", () => {
    expect(paths({ ...charge, toolClass: "REVERSIBLE", compensator: null })).toEqual(["compensator"]);
    expect(paths({ ...charge, toolClass: "PURE", compensator: null }, null)).toEqual([]);
    expect(paths(charge, null, { ...connectors, lookupAvailable: false })).toEqual(["toolClass"]);
  });

  it("an irreversible tool needs an owner and a correction template", () => {
    expect(paths({ ...charge, toolClass: "IRREVERSIBLE", compensator: null, owner: null })).toEqual(["owner", "correctionSubject"]);
    expect(paths({ ...charge, toolClass: "IRREVERSIBLE", compensator: null, correctionSubject: "Correction: {{subject}}" })).toEqual(["correctionBody"]);
    expect(paths({ ...charge, toolClass: "IRREVERSIBLE", compensator: null, correctionSubject: "s", correctionBody: "b" })).toEqual([]);
  });

  it("making a tool stricter is never refused for what the connectors cannot do", () => {
    const noLookup = { ...connectors, lookupAvailable: false, compensators: [] };
    // A stricter class, approval switched on, a shorter window, disabling: none needs the connector.
    expect(paths({ ...charge, toolClass: "IRREVERSIBLE", compensator: null, correctionSubject: "s", correctionBody: "b" }, charge, noLookup)).toEqual([]);
    expect(paths({ ...charge, alwaysRequireApproval: true, revocationWindowSec: 3600, status: ToolStatus.DISABLED }, charge, noLookup)).toEqual([]);
    // Loosening is checked: a longer window, or a class that trusts the connector more.
    expect(paths({ ...charge, revocationWindowSec: 48 * 3600 }, charge, noLookup)).toEqual(["compensator", "toolClass"]);
    expect(paths(charge, { ...charge, toolClass: "IRREVERSIBLE" }, noLookup)).toEqual(["compensator", "toolClass"]);
  });

  it("refuses revoke roles that cannot pull triggers and a move back to unreviewed", () => {
    expect(paths({ ...charge, revokeRoles: ["admin", "viewer"] })).toEqual(["revokeRoles"]);
    expect(paths({ ...charge, status: ToolStatus.UNREVIEWED })).toEqual(["status"]);
  });

  it("warns when a tool that can be pulled back has no revocation window", () => {
    const { issues, warnings } = checkToolPolicy("charge_card", { ...charge, revocationWindowSec: null }, charge, connectors);
    expect(issues).toEqual([]);
    expect(warnings).toEqual(["No revocation window: a pull-back of any compensatable call is outside it and becomes an escalation (the class's default is 24 h)."]);
  });

  it("warns when the revocation window outlives the provider's key retention", () => {
    const { issues, warnings } = checkToolPolicy("charge_card", { ...charge, revocationWindowSec: 48 * 3600 }, charge, connectors);
    expect(issues).toEqual([]);
    expect(warnings).toEqual(["The revocation window (48 h) is longer than the provider keeps idempotency keys (24 h): past 24 h, reconcile-by-lookup is the only protection against a second effect."]);
  });
});

describe("diffFields and fillTemplate", () => {
  it("lists exactly the changed fields with their values before and after", () => {
    expect(diffFields(charge, { ...charge, toolClass: "IRREVERSIBLE", revokeRoles: ["admin"] })).toEqual({
      toolClass: { from: "COMPENSATABLE", to: "IRREVERSIBLE" },
      revokeRoles: { from: ["admin", "reviewer"], to: ["admin"] },
    });
    expect(Object.keys(diffFields(null, charge))).toContain("compensator");
  });

  it("fills placeholders from the arguments and leaves unknown ones visible", () => {
    expect(fillTemplate("Correction: {{subject}} for {{ order.id }} ({{missing}})", { subject: "Your refund", order: { id: 1182 } })).toBe("Correction: Your refund for 1182 ({{missing}})");
  });
});

describe("buildCompensationArgs", () => {
  it("keeps a whole placeholder's value as it is, fills text ones, and builds nothing when a placeholder names no argument", () => {
    const template = { amount: "{{amount}}", note: "refund of {{amount}} for {{order.id}}", currency: "{{ currency }}" };
    expect(buildCompensationArgs(template, { amount: 700, currency: "eur", order: { id: "o-1" } })).toEqual({ amount: 700, note: "refund of 700 for o-1", currency: "eur" });
    expect(buildCompensationArgs(template, { amount: 700, currency: "eur" })).toBeNull();
    expect(buildCompensationArgs({ reason: "rolled back" }, {})).toEqual({ reason: "rolled back" });
  });
});
