/**
 * The Prometheus text exposition format (version 0.0.4), written by hand: a family is a name, a type,
 * a help line and samples; label values are escaped as the format says. Small enough not to need a
 * library, and it keeps the counts where they come from (the saga log's rows, metrics.ts).
 */

/** One sample of a family: its labels (low cardinality: never a run or step id) and value. */
export interface Sample {
  /** Label names and values. */
  labels?: Record<string, string>;
  /** The value (a count, seconds...). */
  value: number;
  /** A suffix of the family's name (`_bucket`, `_sum`, `_count` of a histogram). */
  suffix?: string;
}

/** A metric family. */
export interface Family {
  /** `sagaboard_...`, base units (seconds), `_total` on counters. */
  name: string;
  /** counter, gauge or histogram. */
  type: "counter" | "gauge" | "histogram";
  /** One line for people reading the scrape. */
  help: string;
  /** Its samples (a family with none is still announced, so a dashboard finds it). */
  samples: Sample[];
}

/** Content-Type of the text format. */
export const EXPOSITION_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

function formatValue(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return String(value);
}

/** The families as the text a scraper reads. */
export function exposition(families: Family[]): string {
  const lines: string[] = [];
  for (const f of families) {
    lines.push(`# HELP ${f.name} ${f.help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")}`);
    lines.push(`# TYPE ${f.name} ${f.type}`);
    for (const s of f.samples) {
      const labels = Object.entries(s.labels ?? {});
      const labelText = labels.length ? `{${labels.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(",")}}` : "";
      lines.push(`${f.name}${s.suffix ?? ""}${labelText} ${formatValue(s.value)}`);
    }
  }
  return lines.join("\n") + "\n";
}

/** A histogram's samples (cumulative buckets, +Inf, sum, count) from observed values, for one label set. */
export function histogramSamples(bounds: readonly number[], counts: readonly number[], sum: number, labels: Record<string, string> = {}): Sample[] {
  const samples: Sample[] = [];
  let cumulative = 0;
  bounds.forEach((le, i) => {
    cumulative += counts[i] ?? 0;
    samples.push({ suffix: "_bucket", labels: { ...labels, le: String(le) }, value: cumulative });
  });
  const total = cumulative + (counts[bounds.length] ?? 0);
  samples.push({ suffix: "_bucket", labels: { ...labels, le: "+Inf" }, value: total });
  samples.push({ suffix: "_sum", labels, value: sum });
  samples.push({ suffix: "_count", labels, value: total });
  return samples;
}

/** Counts of `values` per bucket of `bounds` (the last slot: above every bound). */
export function bucketCounts(bounds: readonly number[], values: Iterable<number>): number[] {
  const counts = new Array<number>(bounds.length + 1).fill(0);
  for (const v of values) {
    const i = bounds.findIndex((le) => v <= le);
    counts[i === -1 ? bounds.length : i]! += 1;
  }
  return counts;
}
