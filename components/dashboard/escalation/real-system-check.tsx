"use client";

// Checking the real system from the escalation workbench: the step's key is looked up in its external
// system with the tool's own lookup (here, or by a worker that holds the connector), changing nothing;
// what the check found is the evidence the person resolving the item records.

import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Fact, LabelledValues, Mono, Time } from "@/components/saga-display";
import { ZRealSystemCheckState, type TEscalationDetail, type TRealSystemCheck, type TRealSystemCheckState } from "@/lib/desks/escalations/views";
import { errorMessage, getParsed, postParsed } from "@/components/dashboard/live";
import { systemInSentence, systemLabel } from "@/components/dashboard/labels";
import { OTHER_SYSTEM } from "@/lib/server/tools/tool-systems";
import { dashboardUrl, DashboardPath } from "@/lib/delivery/dashboard-paths";
import { FormError } from "@/components/section";

/** An escalation's check of the real system, as the workbench holds it. */
export interface RealSystemChecking {
  /** The latest check's state (checked, a worker asked, a worker failed); undefined before the first read. */
  state: TRealSystemCheckState | undefined;
  /** The latest answered check, or null. */
  check: TRealSystemCheck | null;
  /** A worker was asked and has not answered yet (polled every second meanwhile). */
  waiting: boolean;
  /** Why the last check could not be asked for, or null. */
  error: string | null;
  /** Asks for a check: answered at once where the connector runs here, else by a worker. */
  run: () => Promise<void>;
}

/**
 * The latest check of the real system for an escalation (read while `enabled`: the escalation has a
 * step), and a way to ask for one; `setBusy` says while the request is under way.
 */
export function useRealSystemCheck(escalationId: string, enabled: boolean, setBusy: (busy: "check" | null) => void): RealSystemChecking {
  const queryClient = useQueryClient();
  const checkKey = ["escalation-check", escalationId];
  const checkUrl = dashboardUrl(DashboardPath.checkRealSystem, { escalationId });
  const { data: checkState } = useQuery({
    queryKey: checkKey,
    queryFn: () => getParsed(checkUrl, ZRealSystemCheckState),
    enabled,
    staleTime: Infinity,
    refetchOnWindowFocus: false,
    refetchInterval: (query) => (query.state.data?.state === "waiting" ? 1000 : false),
  });
  const [checkError, setCheckError] = useState<string | null>(null);

  async function runCheck() {
    setBusy("check");
    setCheckError(null);
    try {
      queryClient.setQueryData(checkKey, await postParsed(checkUrl, ZRealSystemCheckState));
    } catch (e) {
      setCheckError(errorMessage(e));
    } finally {
      setBusy(null);
    }
  }

  return { state: checkState, check: checkState?.state === "checked" ? checkState.check : null, waiting: checkState?.state === "waiting", error: checkError, run: runCheck };
}

/** A check that went to a worker: still waiting for it, or what it could not do. */
function CheckProgress({ state }: { state: TRealSystemCheckState }) {
  if (state.state === "waiting") {
    return (
      <p className="check asked" role="status">
        No connector for <code>{state.tool}</code> runs on this server, so a worker that holds it was asked to look the key up in {systemInSentence(state.system, state.tool)} at <Time at={state.askedAt} /> UTC.{" "}
        {state.claimedBy ? `${state.claimedBy} is looking it up now.` : "No worker holding it has picked it up yet."} The answer shows here when it comes; if no such worker runs, check{" "}
        {systemInSentence(state.system, state.tool)} by hand and record what you found below.
      </p>
    );
  }
  if (state.state === "failed") {
    return (
      <p className="form-error" role="alert">
        The worker could not look it up in {systemInSentence(state.system, state.tool)}: {state.error}. Check {systemInSentence(state.system, state.tool)} by hand, then record what you found.
      </p>
    );
  }
  return null;
}

/** What a check found: the effect, nothing, or the system not answering; and what was looked up (nothing is changed). */
function CheckResult({ check }: { check: TRealSystemCheck }) {
  return (
    <div className={check.found ? "check found" : check.error ? "check failed" : "check absent"} role="status">
      <strong>
        {check.found
          ? `Found in ${systemInSentence(check.system, check.tool)}: the effect exists.`
          : check.error
            ? `${check.system === OTHER_SYSTEM ? `The system ${check.tool} acts on` : systemLabel(check.system)} did not answer: ${check.error}`
            : `Not found in ${systemInSentence(check.system, check.tool)} after ${check.lookups} lookups.`}
      </strong>
      <dl className="facts-list compact">
        <Fact label="Looked up">
          key <Mono text={check.stepKey} /> with <code>{check.tool}</code>&apos;s lookup
        </Fact>
        {check.externalRef && (
          <Fact label="External ref">
            <Mono text={check.externalRef} />
          </Fact>
        )}
        {check.result !== null && (
          <Fact label="It returned">
            <LabelledValues value={check.result} />
          </Fact>
        )}
        <Fact label="Checked">
          <Time at={check.checkedAt} /> UTC by {check.checkedBy} · nothing was changed
        </Fact>
      </dl>
    </div>
  );
}

/**
 * The box to check the real system: which key it looks up where, the button, and what the check found.
 * `first` when it is the evidence the person holding the item works from; `disabled` while anything
 * else is being sent; `asking` while this check is.
 */
export function RealSystemCheck({ step, system, first, disabled, asking, checking }: { step: Pick<NonNullable<TEscalationDetail["step"]>, "stepKey" | "tool">; system: string; first: boolean; disabled: boolean; asking: boolean; checking: RealSystemChecking }) {
  return (
    <div className={first ? "check-box first" : "check-box"}>
      <h3>Check the real system</h3>
      <p className="muted small">
        Looks step key {step.stepKey.slice(0, 8)}… up in {systemInSentence(system, step.tool)} with <code>{step.tool}</code>&apos;s own lookup, where its connector runs. Changes nothing.
      </p>
      <button type="button" className="button" disabled={disabled || checking.waiting} onClick={() => void checking.run()}>
        {asking ? "Checking…" : checking.waiting ? "Waiting for a worker…" : checking.check ? "Check again" : "Check the real system"}
      </button>
      <FormError message={checking.error} />
      {checking.state && <CheckProgress state={checking.state} />}
      {checking.check && <CheckResult check={checking.check} />}
    </div>
  );
}
