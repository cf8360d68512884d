/**
 * A tool as the per-tool reversibility table has it now: what the gate decides a call on (class,
 * owner, policy version, holds), the compensator its compensation must name, and whether it takes
 * calls at all. Both deciding sides read it through this one function: the server from its table
 * for every agent call, and the engine in process from its store's table, so an admin's edit
 * governs a call whichever side decides it. A registered definition stands in only where a store
 * keeps no table (the memory store) or the table has no row for the tool.
 */
import { SagaError } from "./errors";
import type { ToolDefinition } from "./tools";
import { ApprovalReason, TOOL_CLASSES, TOOL_STATUSES, ToolClass, ToolStatus } from "./vocabulary";

/** What the gate needs to know of a tool: a registered definition, or the server's tool-table row. */
export type GateTool = Pick<ToolDefinition, "name" | "class" | "owner" | "policyVersion"> & {
  /** Set when the tool table holds every call of the tool for a person (before the pivot), whatever its class. */
  holdEveryCall?: typeof ApprovalReason.UNREVIEWED | typeof ApprovalReason.ALWAYS_APPROVE;
};

/** A tool-table row as a call is decided with it. */
export interface TableTool extends GateTool {
  /** The compensator the tool's compensation must name. */
  compensator: string | null;
  /** Review status: a disabled tool takes no new intents, an unreviewed one holds every call. */
  status: ToolStatus;
  /** Who disabled it (for the refusal), when disabled. */
  disabledBy: string | null;
}

/** The stored columns `tableTool` reads (a ToolPolicy row; plain fields, so the saga core needs no database types). */
export interface ToolTableRow {
  name: string;
  toolClass: string;
  owner: string | null;
  policyVersion: number;
  status: string;
  alwaysRequireApproval: boolean;
  compensator: string | null;
  disabledBy: string | null;
}

/** The status stored in a row; anything unknown is treated as unreviewed (held), never as reviewed. */
export function storedStatus(value: string): ToolStatus {
  return (TOOL_STATUSES as readonly string[]).includes(value) ? (value as ToolStatus) : ToolStatus.UNREVIEWED;
}

/**
 * The class a row is enforced with: an unreviewed tool (new, or whose definition changed since its
 * review) is IRREVERSIBLE whatever its row or its team's declaration says, so no call of it is ever
 * passed through unlogged as PURE or staged without a person; only an admin's review makes it anything else.
 */
export function enforcedClass(row: Pick<ToolTableRow, "toolClass" | "status">): ToolClass {
  return storedStatus(row.status) === ToolStatus.UNREVIEWED ? ToolClass.IRREVERSIBLE : (row.toolClass as ToolClass);
}

/**
 * The team an item about the tool is routed to (who may claim, check and resolve it): the owner an
 * admin set on a reviewed row; nobody in particular (reviewers) while the tool is unreviewed, whatever
 * its declaration named.
 */
export function routedOwner(row: Pick<ToolTableRow, "owner" | "status">): string | null {
  return storedStatus(row.status) === ToolStatus.UNREVIEWED ? null : row.owner;
}

/** A stored row as a call is decided with it; a row with an unknown class is refused, naming the fix. */
export function tableTool(row: ToolTableRow): TableTool {
  if (!TOOL_CLASSES.includes(row.toolClass as ToolClass)) {
    throw new SagaError("INVALID_TOOL_DEFINITION", `The tool table gives "${row.name}" an unknown class "${row.toolClass}"; an admin must fix the row.`);
  }
  const status = storedStatus(row.status);
  const holdEveryCall = status === ToolStatus.UNREVIEWED ? ApprovalReason.UNREVIEWED : row.alwaysRequireApproval ? ApprovalReason.ALWAYS_APPROVE : undefined;
  return {
    name: row.name,
    class: enforcedClass(row),
    owner: routedOwner(row) ?? undefined,
    policyVersion: row.policyVersion,
    ...(holdEveryCall ? { holdEveryCall } : {}),
    compensator: status === ToolStatus.UNREVIEWED ? null : row.compensator,
    status,
    disabledBy: row.disabledBy,
  };
}

/** A registered definition standing in for a table row (a store with no table, or a tool not in it). */
export function registeredTool(def: ToolDefinition): TableTool {
  return { name: def.name, class: def.class, owner: def.owner, policyVersion: def.policyVersion ?? 1, compensator: def.compensation?.with ?? null, status: ToolStatus.REVIEWED, disabledBy: null };
}

/** Refuses a new intent for a disabled tool, naming the tool and who disabled it. */
export function assertToolEnabled(tool: TableTool): void {
  if (tool.status === ToolStatus.DISABLED) {
    throw new SagaError("TOOL_DISABLED", `Tool "${tool.name}" was disabled in the tool table by ${tool.disabledBy ?? "an admin"}; no new calls are recorded. Ask them (or an admin) to enable it at /admin/tools/${tool.name}.`, [
      { path: "tool", message: "disabled in the tool table" },
    ]);
  }
}
