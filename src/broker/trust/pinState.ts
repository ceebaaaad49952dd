// What the pins show and say: a server's pin state, the review's diff (tools, prompts, instructions),
// the review command every quarantine message names, and the error a quarantined tool's call gets.
import type { ServerDef } from '../../registry/schema';
import { ErrorCodes, McpFailure } from '../shared/mcpTypes';
import type { PinSource } from './pinStore';
import type { PromptChange } from './promptPins';
import type { ResourceChange } from './resourcePins';
import type { ScanFinding } from './toolScanner';
import type { PinnedTool } from './toolDigest';

export type PinStatus = 'pinned' | 'unpinned' | 'changed';

/** A server's pins as the state shows them. */
export interface PinState {
  status: PinStatus;
  /** Tools held back: not listed to any client and refused when called. */
  quarantined: string[];
  /** Pinned tools the server no longer lists. */
  removed: string[];
  /** Tool names the server lists more than once: held back until it lists each name once. */
  duplicated?: string[];
  /** Whether the instructions it gives now differ from the pinned ones (then they are not served). */
  instructionsChanged?: boolean;
  /** Prompts held back: not listed, `prompts/get` refused (changed, new, listed twice or oversized). */
  quarantinedPrompts?: string[];
  /** Pinned prompts the server no longer lists. */
  removedPrompts?: string[];
  /** Resource templates (by uriTemplate) held back: not listed, no completions, reads only they match refused. */
  quarantinedResourceTemplates?: string[];
  /** Pinned resource templates the server no longer lists. */
  removedResourceTemplates?: string[];
  /** Resources (by URI) whose pinned metadata changed (or new ones under `pins.resources: strict`): not listed, reads refused. */
  quarantinedResources?: string[];
  /** The hash of the tool set the server lists now: `accept_tool_changes` must send it back. */
  toolsHash?: string;
  source?: PinSource;
  /** Whether mcp-servers.lock holds a pin for this server. */
  locked: boolean;
  /** Why mcp-servers.lock was not used (it is then as if absent). */
  lockfileProblem?: string;
}

export interface ToolChange {
  tool: string;
  /** `duplicated`: listed more than once, every definition in `duplicates`; never accepted. */
  change: 'changed' | 'added' | 'removed' | 'duplicated';
  /** The pinned definition; absent when only its digest is known (a pin from mcp-servers.lock). */
  before?: PinnedTool;
  after?: PinnedTool;
  /** Which pins the tool differs from. */
  differsFrom: ('approval' | 'lockfile')[];
  duplicates?: PinnedTool[];
  /** What the scanner found in the definition as it is now (toolScanner.ts). */
  findings?: ScanFinding[];
}

/** The server's instructions: pinned (null: it gave none; absent: only its digest is known) and now. */
export interface InstructionsChange {
  before?: string | null;
  after: string | null;
  /** What the scanner found in them as they are now. */
  findings?: ScanFinding[];
}

export interface ToolChanges {
  server: string;
  status: PinStatus;
  policy: NonNullable<ServerDef['onToolChange']>;
  /** Send this to accept_tool_changes: it names exactly the tools, prompts and instructions shown here. */
  toolsHash: string;
  changes: ToolChange[];
  /** How its prompts differ from their pins, prompt by prompt (empty: they match). */
  prompts: PromptChange[];
  /** How its resource templates differ from their pins, by uriTemplate (empty: they match). */
  resourceTemplates: ResourceChange[];
  /** Its held-back resources, by URI: changed metadata, new under strict, listed twice, oversized. */
  resources: ResourceChange[];
  /** Present when the instructions differ from the pinned ones. */
  instructions?: InstructionsChange;
}

/** The command that reviews a server's tool changes, as every message about a quarantine names it. */
export function reviewCommand(server: string): string {
  return `run 'Switchboard: Review Tool Changes' or \`switchboard review ${server}\``;
}

/** The error a call to a quarantined tool gets. */
export function toolQuarantined(server: string, tool: string): McpFailure {
  return new McpFailure(
    ErrorCodes.Forbidden,
    `Tool '${tool}' of server '${server}' is quarantined: its definition is not the one pinned when the server ` +
      `was approved (it changed, it is new, or the server lists the name more than once). The operator must ` +
      `review the change: ${reviewCommand(server)}.`,
  );
}

export class PinMismatch extends Error {}

/** What the gate holds back of a server's lists: tool and prompt names, uriTemplates and resource URIs. */
export interface HeldBack {
  tools: ReadonlySet<string>;
  prompts: ReadonlySet<string>;
  resourceTemplates: ReadonlySet<string>;
  resources: ReadonlySet<string>;
}

/** What the catalog's gate knows of a running server besides its tools; undefined while its lists are cached. */
export interface LiveServer {
  instructions?: string;
}
