// What a tool's team declared beside what the table accepted, field by field: a declaration is a
// suggestion, never trusted as it is.

import { Time } from "@/components/saga-display";
import type { TToolDetail } from "@/lib/server/tools/views";
import { storedValueInWords, toolFieldLabel } from "@/components/admin/tool-labels";
import styles from "@/components/admin/tools.module.css";

/** The declaration's suggestion for each field, as the manifest spelt it. */
function declaredValues(declared: Record<string, unknown>): Record<string, unknown> {
  const comp = declared.compensation as { tool?: unknown } | undefined;
  const corr = declared.correction as { subject?: unknown; body?: unknown } | undefined;
  return {
    toolClass: declared.class,
    compensator: comp?.tool ?? null,
    undoMechanism: declared.undoMechanism ?? null,
    owner: declared.owner ?? null,
    revocationWindowSec: declared.revocationWindowSec ?? null,
    keyRetentionSec: declared.keyRetentionSec ?? null,
    audienceRule: Array.isArray(declared.audience) ? declared.audience.join(", ") : null,
    correctionSubject: corr?.subject ?? null,
    correctionBody: corr?.body ?? null,
    description: declared.description ?? null,
  };
}

/** Declared beside accepted: the team's suggestion is never trusted as it is. */
export function DeclaredVsAccepted({ detail }: { detail: TToolDetail }) {
  if (!detail.declared) return null;
  const declared = declaredValues(detail.declared);
  const tool = detail.tool as unknown as Record<string, unknown>;
  return (
    <section className="panel" aria-labelledby="declared">
      <h2 id="declared">Declared and accepted</h2>
      <p className="muted small">
        Declared by <strong>{detail.declaredBy}</strong> <Time at={detail.declaredAt} />. A declaration is a suggestion: the row on the right is what agents meet.
        {detail.argsSchemaMissing ? " It declares no argument schema: calls take any JSON." : " Calls are checked against its argument schema."}
      </p>
      <div className="table-wrap">
        <table className={styles.compare}>
          <thead>
            <tr>
              <th>Field</th>
              <th>Declared</th>
              <th>In the table</th>
            </tr>
          </thead>
          <tbody>
            {Object.entries(declared).map(([field, value]) => {
              const accepted = tool[field];
              const differs = storedValueInWords(field, value) !== storedValueInWords(field, accepted);
              return (
                <tr key={field} className={differs ? styles.differs : undefined}>
                  <th scope="row">{toolFieldLabel(field) ?? field}</th>
                  <td>{storedValueInWords(field, value)}</td>
                  <td>{storedValueInWords(field, accepted)}</td>
                </tr>
              );
            })}
            <tr>
              <th scope="row">Lookup by key</th>
              <td>{storedValueInWords("lookup", detail.declared.lookup)}</td>
              <td>{storedValueInWords("lookup", detail.tool.lookupAvailable)}</td>
            </tr>
          </tbody>
        </table>
      </div>
      <details className={styles.raw}>
        <summary>The manifest entry as sent</summary>
        <pre>{JSON.stringify(detail.declared, null, 2)}</pre>
      </details>
    </section>
  );
}
