import { describe, expect, it } from "vitest";
import { ACTION_PHRASES, ACTIONS, Action, can, isRole, Role, ROLES, ZRole, rolesThatCan } from "./roles";

/** The permission table of ARCHITECTURE.md ("People and what they do"), written out by hand. */
const EXPECTED: Record<Role, readonly Action[]> = {
  admin: ACTIONS,
  reviewer: ["pivot.decide", "escalation.claim", "escalation.resolve", "revoke.pull", "read"],
  support: ["correction.handle", "read"],
  viewer: ["read"],
};

describe("can", () => {
  for (const role of ROLES) {
    for (const action of ACTIONS) {
      const allowed = EXPECTED[role].includes(action);
      it(`${role} ${allowed ? "may" : "may not"} ${action}`, () => {
        expect(can(role, action)).toBe(allowed);
      });
    }
  }

  it("lets everyone read and only admins manage users, tokens and the tool table", () => {
    expect(rolesThatCan(Action.READ)).toEqual([Role.ADMIN, Role.REVIEWER, Role.SUPPORT, Role.VIEWER]);
    expect(rolesThatCan(Action.USERS_MANAGE)).toEqual([Role.ADMIN]);
    expect(rolesThatCan(Action.TOKENS_MANAGE)).toEqual([Role.ADMIN]);
    expect(rolesThatCan(Action.TOOLS_EDIT)).toEqual([Role.ADMIN]);
    expect(rolesThatCan(Action.PIVOT_DECIDE)).toEqual([Role.ADMIN, Role.REVIEWER]);
    expect(rolesThatCan(Action.CORRECTION_HANDLE)).toEqual([Role.ADMIN, Role.SUPPORT]);
  });

  it("lists the nine actions and a phrase for each", () => {
    expect([...ACTIONS].sort()).toEqual(
      ["correction.handle", "escalation.claim", "escalation.resolve", "pivot.decide", "read", "revoke.pull", "tokens.manage", "tools.edit", "users.manage"].sort(),
    );
    for (const action of ACTIONS) expect(ACTION_PHRASES[action]).toMatch(/^[a-z]/);
  });
});

describe("roles", () => {
  it("accepts exactly the four stored role names", () => {
    expect(ROLES).toEqual(["admin", "reviewer", "support", "viewer"]);
    expect(isRole("reviewer")).toBe(true);
    expect(isRole("Reviewer")).toBe(false);
    expect(isRole("agent")).toBe(false);
    expect(ZRole.safeParse("superuser").success).toBe(false);
    expect(ZRole.parse("viewer")).toBe("viewer");
  });
});
