/**
 * A waiting pivot as a Slack message (Block Kit): what it asks, the plan's calls with the ones that
 * cannot be taken back marked, Approve and Reject buttons (their value names the pivot and the plan
 * hash, so a click decides only the plan the message showed), and a link to the pivot screen. Once
 * decided, the buttons give way to who decided what.
 */
import type { PlanItem } from "@/packages/client/src/saga/store";

/** The action ids of the buttons and the reject modal's callback id. */
export const SlackAction = {
  approve: "sagaboard_pivot_approve",
  reject: "sagaboard_pivot_reject",
  rejectModal: "sagaboard_pivot_reject_reason",
} as const;

/** What a button's value carries. */
export interface PivotButtonValue {
  pivotId: string;
  planHash: string;
}

type Block = Record<string, unknown>;

function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function planLines(plan: readonly PlanItem[]): string {
  return plan
    .map((item, i) => {
      const mark = item.toolClass === "IRREVERSIBLE" ? " :warning: cannot be taken back" : "";
      const args = JSON.stringify(item.args);
      return `${i + 1}. \`${escapeMrkdwn(item.tool)}\` ${escapeMrkdwn(args.length > 160 ? `${args.slice(0, 157)}...` : args)}${mark}`;
    })
    .join("\n");
}

/** The message's head: the run, the summary, the plan, the link. */
function head(pivot: { id: string; summary: string; plan: readonly PlanItem[] }, runTitle: string, link: string): Block[] {
  return [
    { type: "section", text: { type: "mrkdwn", text: `*Pivot waiting: ${escapeMrkdwn(runTitle)}*\n${escapeMrkdwn(pivot.summary)}` } },
    { type: "section", text: { type: "mrkdwn", text: `*If approved, the agent may make:*\n${planLines(pivot.plan)}` } },
    { type: "context", elements: [{ type: "mrkdwn", text: `<${link}|Open the pivot in Sagaboard> to see every staged step by system and audience.` }] },
  ];
}

/** The message of a pending pivot, with its buttons (and who approved so far, for two approvers). */
export function pendingPivotBlocks(pivot: { id: string; summary: string; planHash: string; plan: readonly PlanItem[] }, runTitle: string, link: string, approvedSoFar: readonly string[] = []): Block[] {
  const value = JSON.stringify({ pivotId: pivot.id, planHash: pivot.planHash } satisfies PivotButtonValue);
  return [
    ...head(pivot, runTitle, link),
    ...(approvedSoFar.length > 0 ? [{ type: "context", elements: [{ type: "mrkdwn", text: `Approved by ${approvedSoFar.map(escapeMrkdwn).join(", ")} (${approvedSoFar.length} of 2): another reviewer's approval decides.` }] }] : []),
    {
      type: "actions",
      block_id: "sagaboard_decision",
      elements: [
        { type: "button", action_id: SlackAction.approve, style: "primary", text: { type: "plain_text", text: "Approve" }, value },
        { type: "button", action_id: SlackAction.reject, style: "danger", text: { type: "plain_text", text: "Reject" }, value },
      ],
    },
  ];
}

/** The message once decided: no buttons, who decided what and when. */
export function decidedPivotBlocks(pivot: { id: string; summary: string; plan: readonly PlanItem[] }, runTitle: string, link: string, outcome: string): Block[] {
  return [...head(pivot, runTitle, link), { type: "section", text: { type: "mrkdwn", text: outcome } }];
}

/** The reject modal: the reason goes back to the agent. */
export function rejectModal(metadata: string): Record<string, unknown> {
  return {
    type: "modal",
    callback_id: SlackAction.rejectModal,
    private_metadata: metadata,
    title: { type: "plain_text", text: "Reject the pivot" },
    submit: { type: "plain_text", text: "Reject" },
    close: { type: "plain_text", text: "Cancel" },
    blocks: [
      {
        type: "input",
        block_id: "reason",
        label: { type: "plain_text", text: "Why? The agent reads this to revise or unwind." },
        element: { type: "plain_text_input", action_id: "reason", multiline: true, min_length: 1, max_length: 2000 },
      },
    ],
  };
}
