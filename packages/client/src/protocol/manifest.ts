/**
 * A team's tool manifest and what declaring it did: the wire both sides share. No server module
 * here: the agent-side client builds manifests with it (packages/client/src/agent/client/declare-tools.ts).
 */
import * as z from "zod";
import { ToolClass, ToolStatus } from "../saga/vocabulary";
import { canonicalJson, sha256Hex } from "../saga/keys";

/** A name inside a manifest: bare (`create_booking`, put in the namespace) or already namespaced. */
const LocalName = z.string().trim().regex(/^[a-z][a-z0-9_.-]{0,63}$/, "1-64 lower-case letters, digits, '_', '.' or '-', starting with a letter.");
const Text = (max: number) => z.string().trim().min(1).max(max);
/** A field of a call's arguments or result: a name, or a dotted path into an object (`customer.email`). */
const FieldPath = z.string().trim().max(120).regex(/^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$/, "A field name, or a dotted path into an object (customer.email).");
const Seconds = z.number().int().min(0, "Cannot be negative.").max(366 * 24 * 3600, "At most a year.");

/** One tool as its team declares it. Every field is a suggestion an admin reviews. */
export const ZDeclaredTool = z.strictObject({
  /** The tool's name; put in the declaring namespace (`team.create_booking`). */
  name: LocalName,
  /** What the team says the tool does to the world. */
  class: z.enum(ToolClass, { error: "Use one of: PURE, REVERSIBLE, COMPENSATABLE, IRREVERSIBLE." }),
  /** One line for people. */
  description: Text(500).optional(),
  /** JSON schema of the arguments. */
  argsSchema: z.record(z.string(), z.unknown()).optional(),
  /** Whether the team's connector can look an effect up by its step key. */
  lookup: z.boolean({ error: "Say whether the connector can look an effect up by its step key (true or false)." }),
  /** The compensating tool and how its arguments are built from the forward call's ({{arg}} placeholders). */
  compensation: z.strictObject({ tool: LocalName, args: z.record(z.string(), z.string()).default({}) }).optional(),
  /** How the effect is undone, in words. */
  undoMechanism: Text(500).optional(),
  /** Who can see the effect. */
  audience: z.array(Text(40)).max(10).optional(),
  /** The correction template (irreversible tools), with {{arg}} placeholders. */
  correction: z.strictObject({ subject: Text(300), body: Text(5000) }).optional(),
  /** The team whose queue gets its escalations. */
  owner: Text(80).optional(),
  /**
   * Which fields carry personal data: the argument naming the person (`subject`), and the other
   * argument and result fields that are personal. A suggestion like the rest: an admin accepts it.
   */
  personalData: z
    .strictObject({
      subject: FieldPath,
      args: z.array(FieldPath).max(40).default([]),
      result: z.array(FieldPath).max(40).default([]),
    })
    .optional(),
  /** Suggested revocation window, seconds. */
  revocationWindowSec: Seconds.optional(),
  /** How long the provider keeps idempotency keys, seconds. */
  keyRetentionSec: Seconds.optional(),
  /**
   * What the tool's own server says of it (an MCP server's annotations), unverified: shown to the admin
   * in words, and read only where an admin chose to trust a namespace's read-only tools.
   */
  hints: z
    .strictObject({
      readOnly: z.boolean().optional(),
      destructive: z.boolean().optional(),
      idempotent: z.boolean().optional(),
      openWorld: z.boolean().optional(),
    })
    .optional(),
});
/** One tool as its team declares it. */
export type TDeclaredTool = z.infer<typeof ZDeclaredTool>;

/** A compensator the team's connector runs. */
export const ZDeclaredCompensator = z.strictObject({
  /** Its name; put in the declaring namespace. */
  name: LocalName,
  /** JSON schema of its arguments. */
  argsSchema: z.record(z.string(), z.unknown()).optional(),
  /** One line for people. */
  description: Text(500).optional(),
});

/** A team's tool manifest. */
export const ZToolManifest = z.strictObject({
  /** The tools, at least one. */
  tools: z.array(ZDeclaredTool).min(1, "Declare at least one tool.").max(100),
  /** The compensators its connectors run. */
  compensators: z.array(ZDeclaredCompensator).max(100).default([]),
});
/** A team's tool manifest. */
export type TToolManifest = z.input<typeof ZToolManifest>;

/** What a declaration did to each tool. */
export const ZDeclarationResult = z.object({
  /** The namespace the tools live in. */
  namespace: z.string(),
  tools: z.array(
    z.object({
      /** The namespaced name agents call it by. */
      name: z.string(),
      /** Where it stands now: a new or still-unreviewed tool is UNREVIEWED (every call held). */
      status: z.enum(ToolStatus),
      /** Its policy version now. */
      policyVersion: z.number().int(),
      /**
       * created (unreviewed, held, at its strictest until an admin accepts it) | updated (still
       * unreviewed) | unchanged (the same declaration again) | changed (reviewed before, but its
       * arguments or description changed: unreviewed again, every control as the admin set it) |
       * recorded (reviewed before: the row stands; what the declaration suggests differently waits as a proposal)
       */
      outcome: z.enum(["created", "updated", "unchanged", "changed", "recorded"]),
      /**
       * The row's fields this declaration proposes to change (class, owner, compensator, ...): a
       * proposal waits for an admin to accept or refuse it; the row in force does not take it.
       */
      proposed: z.array(z.string()).optional(),
    }),
  ),
  /** The compensators now registered for the namespace. */
  compensators: z.array(z.string()),
});
/** What a declaration did. */
export type TDeclarationResult = z.infer<typeof ZDeclarationResult>;

/**
 * The hash of what a tool is (its argument schema and its description, as declared): an admin's
 * review covers one definition, and a caller that holds the tool's current definition (the MCP
 * gateway, after each tools/list) runs a call only when its hash is the reviewed one. Canonical JSON,
 * so both sides hash the same bytes whatever order the keys came in.
 */
export function definitionHash(entry: { argsSchema?: unknown; description?: unknown }): string {
  return sha256Hex(canonicalJson({ argsSchema: entry.argsSchema ?? null, description: typeof entry.description === "string" ? entry.description.trim() : null }));
}
