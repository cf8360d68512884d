"use client";

// The escalation workbench composes its parts, each in ./escalation/: the head, what happened, the
// check of the real system, the resolution form and the resolved item. Claiming and releasing the
// item, and which part shows to whom, stay here.

import { useEffect, useState } from "react";
import { Time } from "@/components/saga-display";
import { ZClaimResult, ZEscalationDetail, type TClaimResult, type TEscalationDetail } from "@/lib/desks/escalations/views";
import { errorMessage, postParsed, useLive } from "./live";
import { EscalationHead } from "./escalation/escalation-head";
import { RealSystemCheck, useRealSystemCheck } from "./escalation/real-system-check";
import { ResolutionForm } from "./escalation/resolution-form";
import { Resolved } from "./escalation/resolved";
import { WhatHappened } from "./escalation/what-happened";
import { dashboardUrl, DashboardPath } from "@/lib/delivery/dashboard-paths";
import { FormError } from "@/components/section";

/** One escalation: what happened, and (for the person holding it) the resolution form of its kind. Live. */
export function EscalationWorkbench({ initial }: { initial: TEscalationDetail }) {
  const id = initial.escalation.id;
  const { data, error, refetch } = useLive<TEscalationDetail>(["escalation", id], dashboardUrl(DashboardPath.getEscalation, { escalationId: id }), initial, ZEscalationDetail);
  const { escalation, run, step, abilities } = data;
  const [claimNote, setClaimNote] = useState<string | null>(null);
  const [busy, setBusy] = useState<"claim" | "release" | "check" | null>(null);
  // The latest check: answered here at once, or by a worker (polled while it is waiting).
  // Read only by who may work the item: the check is theirs, and a viewer's browser asking is refused (403s in the console).
  const checking = useRealSystemCheck(id, step !== null && abilities.canResolve, setBusy);
  // Buttons wait for the page to be interactive: a click on the server's first paint would do nothing.
  const [interactive, setInteractive] = useState(false);
  useEffect(() => setInteractive(true), []);

  async function claimOrRelease(action: "claim" | "release") {
    setBusy(action);
    setClaimNote(null);
    try {
      const result: TClaimResult = await postParsed(dashboardUrl(action === "claim" ? DashboardPath.claimEscalation : DashboardPath.releaseEscalation, { escalationId: id }), ZClaimResult);
      if (!result.ok) {
        setClaimNote(
          result.reason === "held"
            ? `Held by ${result.heldByName ? `${result.heldByName} (${result.heldBy})` : result.heldBy}; only they can work it.`
            : result.reason === "resolved"
              ? `Already resolved by ${result.resolvedBy ?? "someone"}.`
              : "You do not hold this item.",
        );
      }
      await refetch();
    } catch (e) {
      setClaimNote(errorMessage(e));
    } finally {
      setBusy(null);
    }
  }

  const resolved = escalation.status === "RESOLVED";
  const heldByOther = escalation.status === "CLAIMED" && !abilities.isClaimer;
  // Checking the real system comes first for the person working the item (it is the evidence).
  const checkBox =
    step && !resolved && abilities.canResolve ? (
      <RealSystemCheck step={step} system={escalation.system ?? "other"} first={abilities.isClaimer} disabled={busy !== null} asking={busy === "check"} checking={checking} />
    ) : null;

  return (
    <>
      <EscalationHead escalation={escalation} run={run} error={error} />

      <div className="workbench">
        <WhatHappened detail={data} />

        <section className="panel resolve-panel" aria-labelledby="resolution">
          <h2 id="resolution">Resolution</h2>
          {resolved ? (
            <Resolved escalation={escalation} run={run} />
          ) : escalation.status === "OPEN" ? (
            abilities.canClaim ? (
              <>
                <p>Nobody holds this item. Claim it to resolve it; nobody else can while you hold it.</p>
                <button type="button" className="button primary" disabled={!interactive || busy !== null} onClick={() => void claimOrRelease("claim")}>
                  {busy === "claim" ? "Claiming…" : "Claim"}
                </button>
              </>
            ) : (
              <p className="muted">You can read this item. Working it needs the reviewer role, or a support role for items a support team owns (approving a held call stays with reviewers).</p>
            )
          ) : heldByOther ? (
            <p className="held-by">
              Held by <strong>{escalation.claimedBy}</strong> since <Time at={escalation.claimedAt} /> UTC. Only they can resolve it.
            </p>
          ) : (
            <>
              <p className="held-by mine">
                You hold this item (since <Time at={escalation.claimedAt} /> UTC).{" "}
                <button type="button" className="link-button" disabled={busy !== null} onClick={() => void claimOrRelease("release")}>
                  Release it
                </button>
              </p>
              {checkBox}
              <ResolutionForm detail={data} check={checking.check} onDone={() => void refetch()} />
            </>
          )}
          <FormError message={claimNote} />
          {!abilities.isClaimer && checkBox}

        </section>
      </div>
    </>
  );
}
