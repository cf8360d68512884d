"use client";

// The tool page composes its parts, each in ./tool/: the status buttons, the row as everyone reads it,
// what the team declared beside it, the editor (admins) and the history.

import { useRouter } from "next/navigation";
import { useState } from "react";
import { ClassBadge, StatusBadge } from "@/components/saga-display";
import type { TToolDetail } from "@/lib/server/tools/views";
import styles from "./tools.module.css";
import { BackLink } from "@/components/section";
import { DeclaredVsAccepted } from "./tool/declared-vs-accepted";
import { RowFacts } from "./tool/row-facts";
import { StatusActions } from "./tool/status-actions";
import { ToolEditor } from "./tool/tool-editor";
import { ToolHistory } from "./tool/tool-history";

/** One tool: its row, what its team declared, the editor (admins) and its history. */
export function ToolPage({ detail }: { detail: TToolDetail }) {
  const router = useRouter();
  const [saved, setSaved] = useState<string | null>(null);
  const tool = detail.tool;
  const onSaved = (text: string) => {
    setSaved(text);
    router.refresh();
  };
  return (
    <>
      <BackLink href="/admin/tools">Tool table</BackLink>
      <div className="page-head">
        <div>
          <h1 className={styles.title}>
            {tool.name} <ClassBadge toolClass={tool.toolClass} /> <StatusBadge status={tool.status} />
          </h1>
          <p className="muted">
            Policy version {tool.policyVersion}
            {tool.namespace ? ` · declared by ${tool.namespace}` : " · registered by a connector this server runs"}
            {tool.description ? ` · ${tool.description}` : ""}
          </p>
        </div>
      </div>
      {saved && (
        <p className={styles.saved} role="status">
          {saved}
        </p>
      )}
      {tool.status === "DISABLED" && <div className="banner bad">Disabled by {tool.disabledBy ?? "an admin"}: agents get a refusal naming them on every new call.</div>}
      {tool.warnings.length > 0 && (
        <ul className={styles.warnings} aria-label="Warnings">
          {tool.warnings.map((w) => (
            <li key={w}>{w}</li>
          ))}
        </ul>
      )}
      <div className={styles.layout}>
        <div className={styles.main}>
          {detail.canEdit && <StatusActions key={`status-${tool.policyVersion}`} tool={tool} argsSchemaMissing={detail.argsSchemaMissing} onSaved={onSaved} />}
          <section className="panel" aria-labelledby="row">
            <h2 id="row">What the table says</h2>
            <RowFacts tool={tool} />
          </section>
          <DeclaredVsAccepted key={`proposal-${tool.policyVersion}-${detail.proposal?.proposedAt ?? "none"}`} detail={detail} onSaved={onSaved} />
          {detail.canEdit ? (
            <ToolEditor key={tool.policyVersion} detail={detail} onSaved={onSaved} />
          ) : (
            <p className="muted">You can read this row. Editing it needs the admin role.</p>
          )}
        </div>
        <ToolHistory history={detail.history} />
      </div>
    </>
  );
}
