/** The payload of a SEND_CORRECTION task: what a person approved, call by call, in plan order. */
import { z } from "zod";

/** One approved message: exactly the `send_email` arguments of one plan item of the correction run's pivot. */
export const ZApprovedMessage = z.object({
  /** One recipient. */
  to: z.email(),
  /** The subject as approved. */
  subject: z.string().min(1),
  /** The body as approved. */
  body: z.string().min(1),
});

/** What the worker needs to send a correction: the gate lets only these exact calls run, once each. */
export const ZSendCorrectionPayload = z.object({
  /** The correction (`cor_...`) whose run this is. */
  correctionId: z.string().trim().min(1),
  /** The approved messages, one per recipient, in the pivot's plan order. */
  messages: z.array(ZApprovedMessage).min(1),
});

/** A SEND_CORRECTION payload. */
export type TSendCorrectionPayload = z.infer<typeof ZSendCorrectionPayload>;
