import { describe, expect, it } from "vitest";
import { lockedArgChanges, lockedArgMessage } from "./reviewer-edits";

const mail = { to: "jo@example.com", subject: "Hi", body: "Hello" };

describe("what a reviewer may change", () => {
  it("by default, wording yes, a recipient or a target no", () => {
    expect(lockedArgChanges(mail, { ...mail, body: "Hello again" }, null)).toEqual([]);
    expect(lockedArgChanges(mail, { ...mail, to: "someone.else@elsewhere.example" }, null)).toEqual(["to"]);
    expect(lockedArgChanges({ chargeId: "ch_1", amount: 5 }, { chargeId: "ch_2", amount: 4 }, null)).toEqual(["chargeId"]);
  });

  it("the tool table's list is the whole list: an admin may open a recipient, or close the wording", () => {
    expect(lockedArgChanges(mail, { ...mail, to: "x@y.z" }, ["to", "body"])).toEqual([]);
    expect(lockedArgChanges(mail, { ...mail, subject: "Hey" }, ["body"])).toEqual(["subject"]);
  });

  it("the refusal names the argument and what to do", () => {
    expect(lockedArgMessage("send_email", ["to"], null)).toBe(
      'You may not change `to`: it names who or what send_email acts on, which only an admin can open to reviewers in the tool table. Reject with "change an argument and propose again" so the agent proposes the call itself.',
    );
  });
});
