/**
 * Every endpoint contract of the HTTP API, in the order the OpenAPI document lists them. Each area
 * keeps its contracts in its own file (`defineEndpoint` from ../endpoint) and adds them here; those
 * files export only endpoint contracts, so Object.values lists them all.
 */
import type { AnyEndpoint } from "@/packages/client/src/protocol/endpoint";
import * as adminPeople from "./admin-people";
import * as audit from "./audit";
import * as calls from "@/packages/client/src/protocol/contracts/calls";
import * as corrections from "./corrections";
import * as dashboard from "./dashboard";
import * as identity from "./identity";
import * as meta from "@/packages/client/src/protocol/contracts/meta";
import * as notifications from "./notifications";
import * as revokes from "./revokes";
import * as runs from "@/packages/client/src/protocol/contracts/runs";
import * as declarations from "@/packages/client/src/protocol/contracts/declarations";
import * as tools from "./tools";
import * as worker from "@/packages/client/src/protocol/contracts/worker";

/** All endpoint contracts; the OpenAPI document (GET /api/v1/openapi.json) is built from this list. */
export const allEndpoints: AnyEndpoint[] = [
  ...Object.values(runs),
  ...Object.values(calls),
  ...Object.values(worker),
  ...Object.values(meta),
  ...Object.values(dashboard),
  ...Object.values(adminPeople),
  ...Object.values(identity),
  ...Object.values(tools),
  ...Object.values(declarations),
  ...Object.values(audit),
  ...Object.values(revokes),
  ...Object.values(corrections),
  ...Object.values(notifications),
];
