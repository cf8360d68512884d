/**
 * Every endpoint contract of the HTTP API, in the order the OpenAPI document lists them. Each area
 * keeps its contracts in its own file (`defineEndpoint` from ../endpoint) and adds them here.
 */
import type { AnyEndpoint } from "../endpoint";
import * as meta from "./meta";

/** All endpoint contracts; the OpenAPI document (GET /api/v1/openapi.json) is built from this list. */
export const allEndpoints: AnyEndpoint[] = [
  // Add each area's contracts here, e.g. after creating lib/api/contracts/runs.ts:
  //   import * as runs from "./runs";   ...   ...Object.values(runs),
  // (runs.ts, steps.ts and worker.ts export only endpoint contracts, so Object.values lists them all.)
  ...Object.values(meta),
];
