// A tool's history: every version of its row, who changed it, when and why, and each field from -> to.

import { Time } from "@/components/saga-display";
import type { TToolVersion } from "@/lib/server/tools/views";
import { storedValueInWords, toolFieldLabel } from "@/components/admin/tool-labels";
import styles from "@/components/admin/tools.module.css";

/** One version of the history: who, when, why, and each field from -> to. */
function VersionItem({ v }: { v: TToolVersion }) {
  const changes = Object.entries(v.diff);
  return (
    <li className={styles.version}>
      <div className={styles.versionHead}>
        <strong>Version {v.version}</strong> · {v.change} by {v.changedBy} · <Time at={v.changedAt} />
      </div>
      {v.reason && <p className={styles.reason}>“{v.reason}”</p>}
      {changes.length === 0 ? (
        <p className="muted small">No field changed.</p>
      ) : v.change === "created" || (v.change === "declared" && changes.length > 4) ? (
        <p className="muted small">Entered the table with {changes.length} fields set.</p>
      ) : (
        <ul className={styles.diff}>
          {changes.map(([field, { from, to }]) => (
            <li key={field}>
              <span className={styles.diffField}>{toolFieldLabel(field) ?? field}</span>: <del>{storedValueInWords(field, from)}</del> → <ins>{storedValueInWords(field, to)}</ins>
            </li>
          ))}
        </ul>
      )}
    </li>
  );
}

/** The history panel: the row's versions, newest first as the server lists them; a row older than the history says so. */
export function ToolHistory({ history }: { history: TToolVersion[] }) {
  return (
    <section className={`panel ${styles.history}`} aria-labelledby="history">
      <h2 id="history">History</h2>
      {history.length === 0 ? (
        <p className="muted small">No versions recorded: this row predates the history (it was added before versions were kept). The next edit starts it.</p>
      ) : (
        <ol className={styles.versions}>
          {history.map((v) => (
            <VersionItem key={v.version} v={v} />
          ))}
        </ol>
      )}
    </section>
  );
}
