/**
 * A strict RFC 4180 reader for the tests that read exports back: records end with CRLF, a quoted
 * field may hold commas, quotes (doubled) and line breaks. Throws on anything else (a bare quote in
 * an unquoted field, an unterminated quote, a record not ended by CRLF), so a sloppy writer fails.
 */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let i = 0;
  while (i < text.length) {
    let field = "";
    if (text[i] === '"') {
      i++;
      for (;;) {
        if (i >= text.length) throw new Error("unterminated quoted field");
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        field += text[i++];
      }
    } else {
      while (i < text.length && text[i] !== "," && text[i] !== "\r" && text[i] !== "\n") {
        if (text[i] === '"') throw new Error(`a quote inside an unquoted field at ${i}`);
        field += text[i++];
      }
    }
    record.push(field);
    if (text[i] === ",") {
      i++;
      continue;
    }
    if (text.startsWith("\r\n", i)) {
      records.push(record);
      record = [];
      i += 2;
      continue;
    }
    throw new Error(`a record must end with CRLF (at ${i}: ${JSON.stringify(text.slice(i, i + 10))})`);
  }
  if (record.length > 0) throw new Error("the last record has no CRLF");
  return records;
}
