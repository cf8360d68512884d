"use client";

// Is the audit log intact? Verifies every hash chain on request (it reads the whole log, so it is a
// button, not something every page view pays for), downloads the chain heads, and checks a saved
// heads file against the log now. Everything is said in words; the raw answers stay on the server.

import Link from "@/components/link";
import { useState, type ChangeEvent, type MouseEvent } from "react";
import { errorMessage, getParsed, postParsed } from "@/components/dashboard/live";
import { Time } from "@/components/saga-display";
import { scopeInWords } from "@/lib/desks/audit/event-words";
import { ZAuditVerification, ZChainHeadsCheck, type TAuditVerification, type TChainHeadsCheck } from "@/lib/desks/audit/views";
import styles from "./audit.module.css";
import { DashboardPath } from "@/lib/delivery/dashboard-paths";

type Break = TAuditVerification["breaks"][number];

const KIND_WORDS: Record<string, [string, string]> = {
  run: ["run", "runs"],
  user: ["account", "accounts"],
  "agent-token": ["agent token", "agent tokens"],
  tool: ["tool", "tools"],
};

function count(n: number, one: string, many: string): string {
  return `${n.toLocaleString("en")} ${n === 1 ? one : many}`;
}

function chainHref(scope: string): string {
  return scope.startsWith("run:") ? `/audit?run=${encodeURIComponent(scope.slice(4))}` : `/audit?scope=${encodeURIComponent(scope)}`;
}

/** One broken link in words, with where to look. */
export function BreakText({ brk, here = null }: { brk: Break; here?: string | null }) {
  return (
    <p className={styles.breakText}>
      Link {brk.seq} of {scopeInWords(brk.scope)} (event #{brk.eventId}, written <Time at={brk.at} /> UTC): {brk.message}{" "}
      <span className={styles.breakLinks}>
        {brk.scope !== here && <Link href={chainHref(brk.scope)}>Show {brk.belongsTo ? "where it sits" : "this chain"}</Link>}
        {brk.belongsTo && <Link href={chainHref(brk.belongsTo)}>Show {scopeInWords(brk.belongsTo)}</Link>}
      </span>
    </p>
  );
}

function Verification({ result }: { result: TAuditVerification }) {
  const kinds = Object.entries(result.chainsByKind)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([kind, n]) => {
      const [one, many] = KIND_WORDS[kind] ?? [`${kind} chain`, `${kind} chains`];
      return count(n, one, many);
    })
    .join(", ");
  const when = (
    <>
      Checked <Time at={result.checkedAt} /> UTC in {result.seconds.toLocaleString("en")} s{result.upToEventId !== null ? `, up to event #${result.upToEventId}` : ""}.
      {result.archivedChains ? ` ${count(result.archivedChains, "chain's", "chains'")} earlier links are in archive files (npm run archive:verify); the table's links go on from the archived heads.` : ""}
    </>
  );
  if (result.verified) {
    return (
      <div className="check found" role="status" data-testid="verification">
        <strong>
          All {count(result.chains, "chain", "chains")} verified ({count(result.events, "event", "events")})
        </strong>
        <p className={styles.resultNote}>
          {kinds ? `${kinds}. ` : ""}
          {when}
        </p>
      </div>
    );
  }
  const more = result.brokenChains - result.breaks.length;
  return (
    <div className="check failed" role="alert" data-testid="verification">
      <strong>
        {result.brokenChains === 1 ? "1 chain is broken" : `${result.brokenChains.toLocaleString("en")} chains are broken`}, of {count(result.chains, "chain", "chains")} (
        {count(result.events, "event", "events")})
      </strong>
      <p className={styles.resultNote}>The first broken link{result.breaks.length > 1 ? " of each chain" : ""}, in the order they were written:</p>
      <ul className={styles.breaks}>
        {result.breaks.map((brk) => (
          <li key={brk.eventId}>
            <BreakText brk={brk} />
          </li>
        ))}
      </ul>
      {more > 0 && <p className={styles.resultNote}>…and {count(more, "more broken chain", "more broken chains")}.</p>}
      <p className={styles.resultNote}>{when}</p>
    </div>
  );
}

function HeadsCheck({ result }: { result: TChainHeadsCheck }) {
  const saved = (
    <>
      saved <Time at={result.savedAt} /> UTC
    </>
  );
  if (result.matches) {
    return (
      <div className="check found" role="status" data-testid="heads-check">
        <strong>All {count(result.checked, "saved head", "saved heads")} still match</strong>
        <p className={styles.resultNote}>The file was {saved}. Chains begun since are not in it; verifying covers them.</p>
      </div>
    );
  }
  const more = result.changedCount - result.changed.length;
  return (
    <div className="check failed" role="alert" data-testid="heads-check">
      <strong>
        {result.changedCount === 0
          ? "The file itself was changed"
          : `${count(result.changedCount, "chain no longer matches its", "chains no longer match their")} saved head${result.changedCount === 1 ? "" : "s"}`}
      </strong>
      {!result.digestMatches && (
        <p className={styles.resultNote}>Its digest does not match the heads it holds: the file was edited or damaged after it was saved, so it proves nothing about the log.</p>
      )}
      {result.changed.length > 0 && (
        <ul className={styles.breaks}>
          {result.changed.map((c) => (
            <li key={`${c.scope}:${c.savedSeq}`}>
              {c.message} <Link href={chainHref(c.scope)}>Show this chain</Link>
            </li>
          ))}
        </ul>
      )}
      {more > 0 && <p className={styles.resultNote}>…and {count(more, "more", "more")}.</p>}
      <p className={styles.resultNote}>
        The file was {saved}; {count(result.matching, "head", "heads")} of {result.checked.toLocaleString("en")} still match{result.archived ? ` (${count(result.archived, "head of a chain", "heads of chains")} archived since, checked against the archived heads)` : ""}.
      </p>
    </div>
  );
}

/** The integrity panel: verify all chains, save the heads, check a saved heads file. */
export function IntegrityPanel() {
  const [verifying, setVerifying] = useState(false);
  const [verification, setVerification] = useState<TAuditVerification | null>(null);
  const [verifyError, setVerifyError] = useState<string | null>(null);
  const [checking, setChecking] = useState<string | null>(null);
  const [check, setCheck] = useState<TChainHeadsCheck | null>(null);
  const [checkError, setCheckError] = useState<string | null>(null);

  async function verify() {
    setVerifying(true);
    setVerifyError(null);
    try {
      setVerification(await getParsed(DashboardPath.verifyAuditChains, ZAuditVerification));
    } catch (e) {
      setVerification(null);
      setVerifyError(errorMessage(e));
    } finally {
      setVerifying(false);
    }
  }

  function nameDownload(event: MouseEvent<HTMLAnchorElement>) {
    // Named when clicked, so two files saved on different days do not overwrite each other.
    event.currentTarget.download = `sagaboard-chain-heads-${new Date().toISOString().slice(0, 16).replace(/[-:]/g, "")}Z.json`;
  }

  async function checkFile(event: ChangeEvent<HTMLInputElement>) {
    const file = event.target.files?.[0];
    event.target.value = "";
    if (!file) return;
    setChecking(file.name);
    setCheck(null);
    setCheckError(null);
    try {
      let parsed: unknown;
      try {
        parsed = JSON.parse(await file.text());
      } catch {
        throw new Error(`${file.name} is not JSON. Choose a file saved with “Download chain heads”.`);
      }
      setCheck(await postParsed(DashboardPath.checkChainHeads, ZChainHeadsCheck, parsed));
    } catch (e) {
      setCheckError(errorMessage(e));
    } finally {
      setChecking(null);
    }
  }

  return (
    <section className={`panel ${styles.integrity}`} aria-labelledby="integrity">
      <div className={styles.integrityPart}>
        <h2 id="integrity">Is the log intact?</h2>
        <p className={styles.lead}>Checks every link of every hash chain: an event changed, removed or moved after it was written is named.</p>
        <button type="button" className="button small primary" onClick={verify} disabled={verifying}>
          {verifying ? "Verifying every chain…" : verification ? "Verify again" : "Verify every chain"}
        </button>
        {verifyError && <p className="form-error">{verifyError}</p>}
        {verification && <Verification result={verification} />}
      </div>
      <div className={styles.integrityPart}>
        <h2>Saved chain heads</h2>
        <p className={styles.lead}>A chain rewritten end to end still links. Keep each chain&apos;s last link in a file elsewhere; checked later, a rewritten, cut or deleted chain no longer matches.</p>
        <div className={styles.headsActions}>
          <a className="button small" href={DashboardPath.exportChainHeads} download="sagaboard-chain-heads.json" onClick={nameDownload}>
            Download chain heads
          </a>
          <label className={`button small ${styles.fileButton}`}>
            {checking ? `Checking ${checking}…` : "Check a saved heads file…"}
            <input type="file" accept=".json,application/json" onChange={checkFile} disabled={checking !== null} data-testid="heads-file" />
          </label>
        </div>
        {checkError && <p className="form-error">{checkError}</p>}
        {check && <HeadsCheck result={check} />}
      </div>
    </section>
  );
}
