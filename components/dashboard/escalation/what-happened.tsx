// What happened, as the escalation workbench shows it: the revoke someone asked for after its window
// closed, the held call, or the step with its external ref, its undo and what that undo left out there.

import { audienceWords } from "@/components/audience-words";
import { ClassBadge, Fact, LabelledValues, Mono, StatusBadge, Time } from "@/components/saga-display";
import type { TEscalationDetail } from "@/lib/desks/escalations/views";

/** Who asked to pull an effect back after its window closed, and why: what the decision turns on. */
function RevokeRequest({ detail }: { detail: TEscalationDetail["escalation"]["detail"] }) {
  const d = detail !== null && typeof detail === "object" && !Array.isArray(detail) ? detail : {};
  const text = (v: unknown) => (typeof v === "string" && v.trim() ? v : null);
  const askedBy = text(d.askedBy);
  const reason = text(d.reason);
  const windowEndsAt = text(d.windowEndsAt);
  return (
    <dl className="facts-list" data-testid="revoke-request">
      <Fact label="Asked by">{askedBy ?? <span className="muted">not recorded</span>}</Fact>
      <Fact label="Why">{reason ?? <span className="muted">no reason given</span>}</Fact>
      <Fact label="Window closed">{windowEndsAt ? <Time at={windowEndsAt} /> : "the tool has no revocation window"}</Fact>
    </dl>
  );
}

/** What happened: the held call, or the step with its external ref and what is still out there. */
export function WhatHappened({ detail }: { detail: TEscalationDetail }) {
  const { heldCall, step, escalation } = detail;
  return (
    <section className="panel" aria-labelledby="context">
      <h2 id="context">What happened</h2>
      {escalation.kind === "REVOKE_OUT_OF_WINDOW" && <RevokeRequest detail={escalation.detail} />}
      {heldCall && (
        <dl className="facts-list">
          <Fact label="Held call">
            <code>{heldCall.tool}</code> {heldCall.toolClass && <ClassBadge toolClass={heldCall.toolClass} />}
          </Fact>
          <Fact label="Arguments">
            <LabelledValues value={heldCall.args} />
          </Fact>
          <Fact label="Why it was held">{heldCall.message ?? heldCall.reason ?? "—"}</Fact>
          <Fact label="If approved">It runs once, when the agent calls it again with exactly these arguments.</Fact>
        </dl>
      )}
      {step && (
        <dl className="facts-list">
          <Fact label="Step">
            #{step.stepIdx} <code>{step.tool}</code> <ClassBadge toolClass={step.toolClass} />{" "}
            <span data-testid={step.standing === "REPAIRED_BY_HAND" ? "repaired-by-hand" : "step-standing"}>
              <StatusBadge status={step.standing} />
            </span>
          </Fact>
          {step.manualRepair && (
            <Fact label="Repaired by hand">
              {step.manualRepair.repairedBy} recorded at <Time at={step.manualRepair.repairedAt} /> UTC
              {step.manualRepair.repairRef ? (
                <>
                  , reference <Mono text={step.manualRepair.repairRef} />
                </>
              ) : (
                ", no reference given"
              )}
              : {step.manualRepair.note}
              <div className="muted small">The pre-written compensation had failed ({step.status.replaceAll("_", " ").toLowerCase()}); the log keeps that, and this repair answers it.</div>
            </Fact>
          )}
          <Fact label="Step key">
            <Mono text={step.stepKey} />
          </Fact>
          <Fact label="External ref">
            <Mono text={step.externalRef} />
          </Fact>
          <Fact label="Arguments">
            <LabelledValues value={step.args} />
          </Fact>
          <Fact label="Who could see it">{audienceWords(step.audience)}</Fact>
          {step.error !== null && (
            <Fact label="Error">
              <LabelledValues value={step.error} />
            </Fact>
          )}
          <Fact label="Compensation">
            {step.compensation ? (
              <>
                Sagaboard calls <code>{step.compensation.tool}</code>
                {step.compensation.args !== null && typeof step.compensation.args === "object" && Object.keys(step.compensation.args).length > 0 && <LabelledValues value={step.compensation.args} currencyOf={step.args} />}
              </>
            ) : (
              <span className="muted">none (irreversible, or none could be built)</span>
            )}
          </Fact>
          {step.compensationState !== "NONE" && (
            <Fact label="Compensation state">
              <StatusBadge status={step.compensationState} /> {step.compensationRef && <Mono text={step.compensationRef} />}
            </Fact>
          )}
          {step.compensationError !== null && <UndoFailure error={step.compensationError} repaired={step.standing === "REPAIRED_BY_HAND"} currencyOf={step.args} />}
          <Fact label="Logged">
            <Time at={step.createdAt} /> · updated <Time at={step.updatedAt} />
          </Fact>
        </dl>
      )}
      <details className="raw">
        <summary>Everything the escalation recorded</summary>
        <LabelledValues value={escalation.detail} rawLabel="Raw JSON" />
      </details>
    </section>
  );
}

/** Why an undo failed, in a sentence, and what it left out there, as labelled values (money as money). */
function UndoFailure({ error, repaired, currencyOf }: { error: NonNullable<TEscalationDetail["step"]>["compensationError"]; repaired: boolean; /** The call's arguments, whose currency its amounts are in. */ currencyOf: unknown }) {
  const e = error !== null && typeof error === "object" && !Array.isArray(error) ? error : null;
  const said = e && typeof e.message === "string" ? e.message : e && typeof e.reason === "string" ? e.reason : null;
  const remaining = e && "remaining" in e ? e.remaining : undefined;
  return (
    <>
      <Fact label="Why the undo failed">
        {said ?? "The compensation could not be confirmed."}
        {remaining === undefined && <LabelledValues value={error} currencyOf={currencyOf} />}
      </Fact>
      {remaining !== undefined && (
        <Fact label={repaired ? "Was out there" : "Still out there"}>
          <LabelledValues value={remaining} currencyOf={currencyOf} />
        </Fact>
      )}
    </>
  );
}
