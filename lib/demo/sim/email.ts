/** An email API without idempotency on send: the saga key travels in an `X-Saga-Key` header. */
import { SimSystem, type SimOptions } from "./system";

/** The header that carries the saga key, so the send log can be searched by key. */
export const SAGA_KEY_HEADER = "X-Saga-Key";

/** Request body of `send` and `createDraft`. */
export interface EmailParams {
  /** Recipient. */
  to: string;
  /** Subject line. */
  subject: string;
  /** Body text. */
  body: string;
  /** Custom headers; put the saga key in `X-Saga-Key`. */
  headers?: Record<string, string>;
}

/** An unsent message: nobody has read it, so deleting it undoes it completely. */
export interface EmailDraft extends Required<EmailParams> {
  /** `drf_…`. */
  id: string;
  /** Drives search lag. */
  createdAt: Date;
}

/** A sent message: it changed what someone knows, and nothing takes that back. */
export interface EmailMessage extends Required<EmailParams> {
  /** `msg_…`. */
  id: string;
  /** The draft it was sent from, when any. */
  draftId?: string;
  /** Send time; drives search lag. */
  createdAt: Date;
}

/** Header lookup is case-insensitive, as in HTTP and SMTP. */
function header(headers: Record<string, string> | undefined, name: string): string | undefined {
  const lower = name.toLowerCase();
  return Object.entries(headers ?? {}).find(([k]) => k.toLowerCase() === lower)?.[1];
}

/** The email service. */
export class EmailSim extends SimSystem {
  private readonly drafts = new Map<string, EmailDraft>();
  private readonly messages: EmailMessage[] = [];

  constructor(opts: SimOptions = {}) {
    super("email", opts);
  }

  /** Stages a message (REVERSIBLE: delete the draft). */
  createDraft(params: EmailParams): Promise<EmailDraft> {
    return this.mutate("createDraft", params, { key: header(params.headers, SAGA_KEY_HEADER) }, () => {
      const draft: EmailDraft = {
        ...params,
        headers: { ...params.headers },
        id: this.nextId("drf_"),
        createdAt: this.clock.now(),
      };
      this.drafts.set(draft.id, draft);
      return { value: draft, ref: draft.id };
    });
  }

  /** Deletes an unsent draft. */
  async deleteDraft(draftId: string): Promise<void> {
    await this.mutate("deleteDraft", { draftId }, this.draftIds(draftId), () => {
      if (!this.drafts.delete(draftId)) throw this.notFound("draft", draftId);
      return { value: undefined, ref: draftId };
    });
  }

  /** Sends a draft (IRREVERSIBLE); the draft is consumed, as in Gmail. */
  sendDraft(draftId: string): Promise<EmailMessage> {
    return this.mutate("sendDraft", { draftId }, this.draftIds(draftId), () => {
      const draft = this.drafts.get(draftId);
      if (!draft) throw this.notFound("draft", draftId);
      this.drafts.delete(draftId);
      return this.deliver(draft, draftId);
    });
  }

  /** Sends at once (IRREVERSIBLE). */
  send(params: EmailParams): Promise<EmailMessage> {
    return this.mutate("send", params, { key: header(params.headers, SAGA_KEY_HEADER) }, () => this.deliver(params));
  }

  /** Search of the send log by header, lagging behind writes. */
  searchSent(headerName: string, value: string): Promise<EmailMessage[]> {
    return this.read(() =>
      this.messages.filter((m) => header(m.headers, headerName) === value && this.searchable(m.createdAt)),
    );
  }

  /** Search of unsent drafts by header, lagging behind writes. */
  searchDrafts(headerName: string, value: string): Promise<EmailDraft[]> {
    return this.read(() =>
      [...this.drafts.values()].filter((d) => header(d.headers, headerName) === value && this.searchable(d.createdAt)),
    );
  }

  /** Direct retrieval is never lagged. */
  getDraft(draftId: string): Promise<EmailDraft | undefined> {
    return this.read(() => this.drafts.get(draftId));
  }

  /** Direct retrieval is never lagged. */
  getMessage(messageId: string): Promise<EmailMessage | undefined> {
    return this.read(() => this.messages.find((m) => m.id === messageId));
  }

  /** Every message that went out, oldest first: what people now know. */
  get sent(): EmailMessage[] {
    return structuredClone(this.messages);
  }

  private draftIds(draftId: string): { key?: string; ref: string } {
    return { key: header(this.drafts.get(draftId)?.headers, SAGA_KEY_HEADER), ref: draftId };
  }

  private deliver(params: EmailParams, draftId?: string) {
    const message: EmailMessage = {
      to: params.to,
      subject: params.subject,
      body: params.body,
      headers: { ...params.headers },
      id: this.nextId("msg_"),
      draftId,
      createdAt: this.clock.now(),
    };
    this.messages.push(message);
    return { value: message, ref: message.id };
  }
}
