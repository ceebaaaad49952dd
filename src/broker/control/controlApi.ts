// The control operations as one typed contract: facade tool name → params → result. Types only
// (every import is `import type`), so the facade, the CLI, the extension and the webview share it.
// The params are the zod definitions' types (operationParams.ts), so they cannot drift from what the
// facade checks; the results are written here.
import type { ClientDef, Lifecycle, PromptDef, ServerDef } from '../../registry/schema';
import type { Problem } from '../../registry/problems';
import type { ApprovalStatus } from '../trust/approvals';
import type { ApprovalLine } from '../trust/approvalSummary';
import type { AccountStatus, InputSource } from '../connection/auth/credentials';
import type { SignInStatus } from '../connection/auth/signIns';
import type { Root } from '../supervision/editorLink';
import type { AppSummary } from '../catalog/apps/appMeta';
import type { PinState, ToolChanges } from '../trust/pins';
import type { ScanReport } from '../trust/scanReport';
import type { TelemetryExportStatus } from '../trust/telemetryExport';
import type { ProbeResult } from '../supervision/probe';
import type { Enforcement } from '../trust/sandbox';
import type { CatalogSource } from '../supervision/upstream';
import type { UpstreamState } from '../supervision/upstreamStates';
import type { AuditRecord } from '../routing/audit';
import type { ParamsInput, ParamsOperation } from './operationParams';
import type { FoundServer } from './registryClient/registryClient';
import type { PolicyStatus, ServerGuardrail } from '../trust/guardrails/guardrails';
import type { ServerNumbers } from '../telemetry/liveNumbers';

export interface ServerStatus {
  name: string;
  description?: string;
  trust: ServerDef['trust'];
  transport: ServerDef['transport'];
  enabled: boolean;
  state: UpstreamState;
  /** eager, or lazy (starts on first use, idle after idleStopMs); the trust tier's default if unset. */
  lifecycle?: Lifecycle;
  /** Where its listed tools come from: `cached` (the persisted catalog) until the upstream confirms them. */
  catalog?: CatalogSource;
  pid?: number;
  uptimeMs?: number;
  restarts: number;
  lastError?: string;
  nextRestartInMs?: number;
  tools: { name: string; exposedAs: string; description?: string }[];
  /** Tools the server offers that its allowedTools / excludeTools keep from every client, and why. */
  hiddenTools?: { name: string; description?: string; why: string }[];
  /** Tokens (cl100k_base) of its tool definitions as tools/list sends them; absent until counted. */
  toolTokens?: number;
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
  /**
   * A remote server with `auth`: whether it is signed in, where its tokens are kept (never the
   * tokens), and whether a sign-in is in progress (never its URL: begin_sign_in hands that to the
   * operator alone, since whoever completes it signs every client in).
   */
  auth?: SignInStatus;
  /** `auth: { type: vscode }`: the VS Code account it needs and whether the editor handed a token over (never the token). */
  account?: AccountStatus;
  /** The `${input:NAME}` secrets its env or headers use: where each value comes from (never the value). */
  inputs?: InputStatus[];
  /** Present when the state is needs-sign-in: the wider scope the server asked for, if it did. */
  signIn?: { scope?: string };
  /** The tool and prompt pins: whether they match what was approved, and which are held back until reviewed. */
  pins?: PinState;
  /** Its MCP Apps: each ui:// page, the tools that open it, what it declares (absent: none). */
  apps?: AppSummary[];
  /** What the tool-description scanner found in its tools, prompts and instructions; absent when nothing. */
  scan?: ScanReport;
  /** Requests this server sent a caller's client (sampling, elicitation, roots) not answered yet. */
  pendingServerRequests?: number;
  /** Requests, error rate, p50/p95 of the last minutes (telemetry/liveNumbers.ts); only while telemetry is on. */
  live?: ServerNumbers;
  /** The protocol revision the running server speaks: '2026-07-28', '2025-11-25', … (when known). */
  protocol?: string;
  /** The guardrail rules and limits in force that can apply to its calls (absent: none). */
  guardrails?: ServerGuardrail[];
  target: string;
  file: string;
}

export interface InputStatus {
  name: string;
  /** From the definition's `inputs`: what to enter, and whether to hide it while typed. */
  description?: string;
  password: boolean;
  /** editor: entered in VS Code (held in memory); store: `switchboard secret set`; absent: nobody entered it. */
  source?: InputSource;
  /** Not passed: the server has no `secrets` grant. */
  withheld?: boolean;
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
  toolMode?: NonNullable<ClientDef['toolMode']>;
  pinnedTools?: ClientDef['pinnedTools'];
  /** Tokens (cl100k_base) of every tool its profile lets it see (what toolMode all sends); absent until counted. */
  toolTokens?: number;
  tokenFile: string;
};

/** One tool find_tools found: what to call, where it lives, and why it matched. */
export type FoundTool = {
  /** The name to call (namespaced, as tools/list shows it). */
  name: string;
  server: string;
  description: string;
  score: number;
  /** Per field searched (name, title, description, parameters, server), the words the query hit. */
  matched: Record<string, string[]>;
  /** The same on one line, for a person. */
  why: string;
};

export type RegistryProblem = Problem & { text: string };

/** What search_registry found in the configured MCP Registries. */
export type RegistrySearch = {
  servers: FoundServer[];
  /** Give back as `cursor` for the next page; absent on the last. */
  nextCursor?: string;
  /** Registries that failed and entries left out, each a sentence. */
  problems: string[];
  /**
   * With `name`: the definition upsert_server would take for it (a community server), or why there
   * is none (several ways to run it, values it needs); `choices` lists the ways when there are several.
   */
  definition?: DefinitionInput;
  notes?: string[];
  choices?: string[];
};

/** The whole state, as the `switchboard://state` resource serves it. */
export interface BrokerState {
  broker: {
    version: string;
    pid: number;
    root: string;
    url: string;
    sessions: number;
    untrusted: boolean;
    /** The administrator's policy file in force, when there is one (its errors and blocks are in `problems`). */
    policy?: string;
    catalogVersion: number;
    /** Resident memory now, and how many times it went quiet and returned a burst's garbage. */
    memory: { rssBytes: number; heapUsedBytes: number; idleCollections: number };
    /** Whether a VS Code window answers elicitation and sampling for callers that cannot (editorLink.ts). */
    editorConnected?: boolean;
    /** Telemetry is on: servers carry `live` numbers, which change without a state event. */
    telemetry?: boolean;
  };
  servers: ServerStatus[];
  prompts: PromptSummary[];
  clients: ClientSummary[];
  problems: RegistryProblem[];
  /** The guardrail policies written in policies.d/ or in force, and where each stands. */
  policies?: PolicyStatus[];
}

export type { AuditRecord };
export type { PolicyStatus, ServerGuardrail };

export type AuditTail = {
  /** `all`: every client's entries and the broker's own (the operator); `own`: the caller's calls only. */
  scope: 'all' | 'own';
  entries: AuditRecord[];
  /** The log file (the operator only; `.1` next to it is the rotated one). */
  file?: string;
};

export type LogLine = { at: string; stream: string; text: string };
/**
 * `next` is the cursor to pass as `after` to get only newer lines (a follower); `skipped` counts the
 * lines after `after` that are no longer (or not all) returned: the ring dropped them, or `lines` capped them.
 */
export type ServerLogs = { server: string; lines: LogLine[]; next: number; skipped?: number };

/** A registry definition as JSON; the broker validates it against the registry schema. */
export type DefinitionInput = Record<string, unknown>;

export type Written = { file: string; name: string };
export type Removed = { removed: boolean };
export type ClientConnection = { client: string; url: string; tokenFile: string; header: string };

/**
 * Every facade tool (`switchboard__<key>`): what it returns (what it takes is in operationParams.ts).
 * The facade's implementation is typed against this map, and every caller goes through it.
 */
export interface ControlResults {
  list_servers: { servers: ServerStatus[] };
  server_status: ServerStatus;
  tail_logs: ServerLogs;
  list_prompts: { prompts: PromptSummary[] };
  list_clients: { clients: ClientSummary[] };
  registry_problems: { problems: RegistryProblem[] };
  enable_server: ServerStatus;
  disable_server: ServerStatus;
  restart_server: ServerStatus;
  /** `note` says when the trust tier asked for was lowered to community (an agent wrote it). */
  upsert_server: Written & { note?: string; status: ServerStatus };
  remove_server: Removed;
  probe_server: ProbeResult;
  upsert_prompt: Written;
  remove_prompt: Removed;
  approve_server: ServerStatus & { approved: string };
  revoke_approval: ServerStatus;
  tool_changes: ToolChanges;
  /** `accepted`: the tools now pinned; `acceptedPrompts`: the prompts. */
  accept_tool_changes: ServerStatus & { accepted: number; acceptedPrompts: number };
  upsert_client: Written;
  remove_client: Removed;
  client_connection: ClientConnection;
  /** In toolMode search the tools found are also added to the calling session's tools/list. */
  find_tools: { query: string; tools: FoundTool[] };
  /** Searches the configured MCP Registries (never one the caller names); with `name`, one server and its definition. */
  search_registry: RegistrySearch;
  /**
   * Calls a tool by name for clients that do not re-list tools. Routed, not run by the facade: the
   * router makes it the same call (profile check, audit) as a direct tools/call of `name`.
   */
  call_tool: Record<string, unknown>;
  /**
   * The newest audit entries, oldest first. The operator reads every entry (optionally one client's);
   * any other client only the entries of its own calls.
   */
  read_audit: AuditTail;
  /** Starts a server's sign-in (a loopback listener on the broker) and returns the URL to open. */
  begin_sign_in: { name: string; url: string };
  sign_out: ServerStatus;
  /**
   * The editor hands over a VS Code account's token for a server with `auth: { type: vscode }`
   * (held in memory only); without `token` it is withdrawn. provider and scopes must be the server's.
   */
  set_account_token: ServerStatus;
  /**
   * `${input:NAME}`: the editor's value (held in memory only; without `value`, forgotten), or with
   * `reload`, re-read from the per-user store after `switchboard secret set|unset`.
   */
  set_input: { name: string; source?: InputSource; servers: string[] };
  /** The editor's workspace folders, given to upstreams as roots (with the registry root). */
  set_editor_roots: { roots: Root[]; changed: boolean };
  /** The editor's switchboard.telemetry.enabled, applied in the running broker (no restart). */
  set_editor_telemetry: EditorTelemetry;
  /** Where the endpoint telemetry.yaml names stands: used, or waiting for the operator's approval. */
  telemetry_export: TelemetryExport;
  /** The operator lets telemetry.yaml's endpoint (as shown) receive this workspace's telemetry, from now on. */
  approve_telemetry_export: TelemetryExport;
  /** The guardrail policies (policies.d/): written, in force, and what approving each would take. */
  list_policies: { policies: PolicyStatus[] };
  /** A policy written by an agent is a proposal: nothing of it is in force until the operator approves it. */
  upsert_policy: Written & { note: string; status: PolicyStatus };
  remove_policy: Removed & { note?: string };
  approve_policy: PolicyStatus;
  revoke_policy: { revoked: boolean };
}

/** What set_editor_telemetry did: telemetry is on or off now, and whether this call changed it. */
export interface EditorTelemetry {
  telemetry: boolean;
  changed: boolean;
  /** Why the editor's word did not decide it (the OTEL_* environment or telemetry.yaml turns it on). */
  note?: string;
}

/**
 * telemetry.yaml's export endpoint and whether it is used (trust/telemetryExport.ts): a workspace's
 * file sends nothing off this machine until the operator approves that endpoint.
 */
export interface TelemetryExport {
  status: TelemetryExportStatus;
  endpoint?: string;
  /** The endpoint approved before, when the file now names another. */
  approvedOther?: string;
  /** Whether the broker's telemetry is on now. */
  telemetry: boolean;
}

export type ControlOperation = keyof ControlResults;
/** What a caller passes to an operation (fields with a default may be left out). */
export type ParamsOf<K extends ControlOperation> = ParamsInput<K>;
export type ResultOf<K extends ControlOperation> = ControlResults[K];
/** Each operation with what it takes and returns. */
export type ControlApi = { [K in ControlOperation]: { params: ParamsOf<K>; result: ResultOf<K> } };

// The zod definitions and the results name the same operations: one more or one less does not compile.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Holds<T extends true> = T;
export type ParamsForEveryOperation = Holds<Same<ControlOperation, ParamsOperation>>;

/** The MCP tool name of an operation: `enable_server` → `switchboard__enable_server`. */
export type FacadeToolName<K extends ControlOperation = ControlOperation> = `switchboard__${K}`;
