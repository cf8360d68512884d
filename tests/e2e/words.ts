/**
 * What a person reads must be words: no raw status codes (NOT_EXECUTED, handled_outside_window) and
 * no machine times (2026-12-03T22:28:05.000Z). Reads the page's visible text, leaving out what is
 * meant to be exact: code (ids, arguments, tool names), closed raw-JSON disclosures and form fields.
 */
import type { Page } from "@playwright/test";

/** An enum as code writes it: two or more words joined by underscores, in capitals or in lower case. */
const RAW_ENUM = /\b(?:[A-Z]{2,}(?:_[A-Z]+)+|[a-z]{2,}(?:_[a-z]+){2,})\b/g;
/** An ISO 8601 timestamp with its T. */
const ISO_TIME = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/g;

/**
 * Raw vocabulary and machine times in the text a person reads on `page`, each with a little context.
 * `names` are words that look like codes and are names (tools: `create_ticket_draft`).
 */
export async function rawWordsOn(page: Page, names: readonly string[] = []): Promise<string[]> {
  const allowed = new Set(names);
  const text = await page.evaluate(() => {
    const skip = "code, pre, kbd, samp, script, style, template, input, textarea, select, details:not([open]) > :not(summary), [hidden], [aria-hidden='true']";
    const parts: string[] = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const parent = node.parentElement;
      if (!parent || parent.closest(skip)) continue;
      const style = getComputedStyle(parent);
      if (style.display === "none" || style.visibility === "hidden") continue;
      parts.push(node.textContent ?? "");
    }
    return parts.join(" ");
  });
  const found: string[] = [];
  for (const pattern of [RAW_ENUM, ISO_TIME]) {
    for (const match of text.matchAll(pattern)) {
      if (allowed.has(match[0])) continue;
      found.push(`“${match[0]}” in “…${text.slice(Math.max(0, match.index - 40), match.index + match[0].length + 40).replace(/\s+/g, " ")}…”`);
    }
  }
  return found;
}
