/**
 * RFC 4180 CSV, written by hand (a field rule and a record rule; no dependency for twelve lines):
 * a field is quoted when it holds a quote, a comma, a line break, or space at either end (which some
 * readers trim), quotes inside are doubled, and every record ends with CRLF.
 */

/** One field, quoted when it must be. */
export function csvField(value: string): string {
  return /[",\r\n]|^\s|\s$/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/** One record, with its CRLF. */
export function csvRecord(values: readonly string[]): string {
  return `${values.map(csvField).join(",")}\r\n`;
}
