/**
 * What every desk's views share: how a run, an external system and an audience's blast radius are
 * named. Each desk's own views (what its use cases return) are in its `views.ts`.
 */
import { z } from "zod";
import { ZRunStatus } from "@/packages/client/src/protocol/schemas/saga";

/** The external system a tool acts on. */
export const ZExternalSystem = z.string().min(1);

/** Blast radius of an audience (packages/client/src/saga/vocabulary audienceRank): 0 internal, 1 partner, 2 customer. */
export const ZAudienceRank = z.number().int().min(0).max(2);

/** A run, as the dashboard names it in headers and links. */
export const ZRunRef = z.object({
  /** `run_...` */
  id: z.string(),
  /** What the run is for. */
  title: z.string(),
  /** The agent running it. */
  agent: z.string(),
  /** The customer or user the agent acts for. */
  onBehalfOf: z.string().nullable(),
  /** Where the run stands. */
  status: ZRunStatus,
});
