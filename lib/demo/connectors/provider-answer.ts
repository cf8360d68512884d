/**
 * What a connector checks before it lets a provider's answer confirm a step. A step is CONFIRMED on
 * the answer's id, and that id is what compensations, revokes and people act on later, so an answer
 * that is not this call's result (garbage, a body cut off, a success without the id, fields of the
 * wrong type, megabytes, an answer about another request's key) must not confirm anything. It is
 * thrown as `MalformedProviderAnswer`, which the engine (not a ToolRejected: the provider did not say
 * no) records as UNKNOWN with the message, raw answer included, and the next call reconciles by key;
 * if the lookup cannot settle it either, the OUTCOME_UNKNOWN escalation shows a person that message.
 */
import type { z } from "zod";

/** Answers above this many characters of JSON are not recorded as a result (a log row is not a blob store). */
export const MAX_ANSWER_CHARS = 256 * 1024;
/** How much of a refused answer the step's recorded reason keeps. */
export const RAW_EXCERPT_CHARS = 1_000;

/** A provider answer a step cannot be confirmed on; the outcome is unknown until the key is looked up. */
export class MalformedProviderAnswer extends Error {
  constructor(
    /** What was called (`payments.charge`). */
    readonly what: string,
    /** What is wrong with the answer. */
    readonly problem: string,
    /** The start of the answer as received. */
    readonly raw: string,
  ) {
    super(
      `${what} answered something this call cannot be confirmed on (${problem}); whether it happened is unknown until the step's key is looked up. ` +
        `Raw answer (first ${RAW_EXCERPT_CHARS} characters): ${raw}`,
    );
    this.name = "MalformedProviderAnswer";
  }
}

/** The answer as text, cut to the excerpt's length. */
function excerpt(text: string): string {
  return text.length > RAW_EXCERPT_CHARS ? `${text.slice(0, RAW_EXCERPT_CHARS)}... (${text.length} characters)` : text;
}

/**
 * The answer, when it is the result of this call: of `schema`'s shape, not over the size limit, and
 * about this request (`isThisCall`: the step key echoed, the id asked for). Throws
 * `MalformedProviderAnswer` otherwise.
 */
export function checkedAnswer<S extends z.ZodType>(what: string, schema: S, answer: unknown, isThisCall: (a: z.infer<S>) => boolean): z.infer<S> {
  let text: string;
  try {
    text = typeof answer === "string" ? answer : (JSON.stringify(answer) ?? String(answer));
  } catch {
    text = String(answer);
  }
  if (text.length > MAX_ANSWER_CHARS) throw new MalformedProviderAnswer(what, `${text.length} characters, over the ${MAX_ANSWER_CHARS} a result may have`, excerpt(text));
  const parsed = schema.safeParse(answer);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? issue.path.join(".") : "the answer";
    throw new MalformedProviderAnswer(what, `${where}: ${issue?.message ?? "not the expected shape"}`, excerpt(text));
  }
  if (!isThisCall(parsed.data)) throw new MalformedProviderAnswer(what, "it is about another request (another key or id)", excerpt(text));
  return parsed.data;
}
