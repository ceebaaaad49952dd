// The control operations as one typed contract: facade tool name → params → result. Types only
// (every import is `import type`), so the facade, the CLI, the extension and the webview share it.
import type { ClientDef, PromptDef, ServerDef } from '../registry/schema';
import type { Problem } from '../registry/problems';
import type { ApprovalStatus } from './approvals';
import type { ApprovalLine } from './approvalSummary';
import type { ProbeResult } from './probe';
import type { Enforcement } from './sandbox';
import type { UpstreamState } from './upstream';

export interface ServerStatus {
  name: string;
  description?: string;
  trust: ServerDef['trust'];
  transport: ServerDef['transport'];
  enabled: boolean;
  state: UpstreamState;
  pid?: number;
  uptimeMs?: number;
  restarts: number;
  lastError?: string;
  nextRestartInMs?: number;
  tools: { name: string; exposedAs: string; description?: string }[];
  promptCount: number;
  resourceCount: number;
  grants: ServerDef['grants'];
  enforcement: Enforcement;
  approval: ApprovalStatus;
  /** The hash of the definition as shown here: approve_server must send it back. */
  approvalHash: string;
  /** What an approval covers, field by field (values that could be secrets masked), for the operator. */
  approvalItems: ApprovalLine[];
  /** The same on one line. */
  approvalSummary: string;
  /** Names of variables withheld for want of the secrets grant (names only, never values). */
  withheldEnv: string[];
  /** Requests this server sent a caller's client (sampling, elicitation, roots) not answered yet. */
  pendingServerRequests?: number;
  /** The protocol revision the running server speaks: '2026-07-28', '2025-11-25', … (when known). */
  protocol?: string;
  target: string;
  file: string;
}

export type PromptSummary = {
  name: string;
  exposedAs: string;
  description?: string;
  arguments: PromptDef['arguments'];
};

export type ClientSummary = {
  name: string;
  description?: string;
  mcp_allow: ClientDef['mcp_allow'];
  tools?: ClientDef['tools'];
  tokenFile: string;
};

export type RegistryProblem = Problem & { text: string };

/** The whole state, as the `switchboard://state` resource serves it. */
export interface BrokerState {
  broker: {
    version: string;
    pid: number;
    root: string;
    url: string;
    sessions: number;
    untrusted: boolean;
    catalogVersion: number;
    /** Resident memory now, and how many times it went quiet and returned a burst's garbage. */
    memory: { rssBytes: number; heapUsedBytes: number; idleCollections: number };
  };
  servers: ServerStatus[];
  prompts: PromptSummary[];
  clients: ClientSummary[];
  problems: RegistryProblem[];
}

export type LogLine = { at: string; stream: string; text: string };
export type ServerLogs = { server: string; lines: LogLine[] };

/** A registry definition as JSON; the broker validates it against the registry schema. */
export type DefinitionInput = Record<string, unknown>;

export type Written = { file: string; name: string };
export type Removed = { removed: boolean };
export type ClientConnection = { client: string; url: string; tokenFile: string; header: string };

type NoParams = Record<string, never>;
type ByName = { name: string };
type WithDefinition = { definition: DefinitionInput };

/**
 * Every facade tool (`switchboard__<key>`): what it takes and what it returns. The facade's
 * implementation is typed against this map, and every caller goes through it.
 */
export interface ControlApi {
  list_servers: { params: NoParams; result: { servers: ServerStatus[] } };
  server_status: { params: ByName; result: ServerStatus };
  tail_logs: { params: ByName & { lines?: number }; result: ServerLogs };
  list_prompts: { params: NoParams; result: { prompts: PromptSummary[] } };
  list_clients: { params: NoParams; result: { clients: ClientSummary[] } };
  registry_problems: { params: NoParams; result: { problems: RegistryProblem[] } };
  enable_server: { params: ByName; result: ServerStatus };
  disable_server: { params: ByName; result: ServerStatus };
  restart_server: { params: ByName; result: ServerStatus };
  /** `note` says when the trust tier asked for was lowered to community (an agent wrote it). */
  upsert_server: { params: WithDefinition; result: Written & { note?: string; status: ServerStatus } };
  remove_server: { params: ByName; result: Removed };
  probe_server: { params: WithDefinition; result: ProbeResult };
  upsert_prompt: { params: WithDefinition; result: Written };
  remove_prompt: { params: ByName; result: Removed };
  approve_server: { params: ByName & { hash: string }; result: ServerStatus & { approved: string } };
  revoke_approval: { params: ByName; result: ServerStatus };
  upsert_client: { params: WithDefinition; result: Written };
  remove_client: { params: ByName; result: Removed };
  client_connection: { params: ByName & { rotate?: boolean }; result: ClientConnection };
}

export type ControlOperation = keyof ControlApi;
export type ParamsOf<K extends ControlOperation> = ControlApi[K]['params'];
export type ResultOf<K extends ControlOperation> = ControlApi[K]['result'];

/** The MCP tool name of an operation: `enable_server` → `switchboard__enable_server`. */
export type FacadeToolName<K extends ControlOperation = ControlOperation> = `switchboard__${K}`;
