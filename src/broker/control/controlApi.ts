// The control operations as one typed contract: facade tool name → params → result. Types only
// (every import is `import type`), so the facade, the CLI, the extension and the webview share it.
import type { ClientDef, Lifecycle, PromptDef, ServerDef } from '../../registry/schema';
import type { Problem } from '../../registry/problems';
import type { ApprovalStatus } from '../trust/approvals';
import type { ApprovalLine } from '../trust/approvalSummary';
import type { AccountStatus, InputSource } from '../auth/credentials';
import type { SignInStatus } from '../auth/signIns';
import type { Root } from '../supervision/editorLink';
import type { PinState, ToolChanges } from '../trust/pins';
import type { ProbeResult } from '../supervision/probe';
import type { Enforcement } from '../trust/sandbox';
import type { CatalogSource } from '../supervision/upstream';
import type { UpstreamState } from '../supervision/upstreamStates';
import type { AuditRecord } from '../routing/audit';
import type { FoundServer } from '../registryClient/registryClient';

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
  /** The tool pins: whether the tools match what was approved, and which are held back until reviewed. */
  pins?: PinState;
  /** Requests this server sent a caller's client (sampling, elicitation, roots) not answered yet. */
  pendingServerRequests?: number;
  /** The protocol revision the running server speaks: '2026-07-28', '2025-11-25', … (when known). */
  protocol?: string;
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
  };
  servers: ServerStatus[];
  prompts: PromptSummary[];
  clients: ClientSummary[];
  problems: RegistryProblem[];
}

export type { AuditRecord };

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
  tail_logs: { params: ByName & { lines?: number; after?: number }; result: ServerLogs };
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
  tool_changes: { params: ByName; result: ToolChanges };
  accept_tool_changes: { params: ByName & { hash: string }; result: ServerStatus & { accepted: number } };
  upsert_client: { params: WithDefinition; result: Written };
  remove_client: { params: ByName; result: Removed };
  client_connection: { params: ByName & { rotate?: boolean }; result: ClientConnection };
  /** In toolMode search the tools found are also added to the calling session's tools/list. */
  find_tools: { params: { query: string; limit?: number }; result: { query: string; tools: FoundTool[] } };
  /** Searches the configured MCP Registries (never one the caller names); with `name`, one server and its definition. */
  search_registry: {
    params: { query?: string; name?: string; choice?: string; cursor?: string; limit?: number };
    result: RegistrySearch;
  };
  /**
   * Calls a tool by name for clients that do not re-list tools. Routed, not run by the facade: the
   * router makes it the same call (profile check, audit) as a direct tools/call of `name`.
   */
  call_tool: { params: { name: string; arguments: Record<string, unknown> }; result: Record<string, unknown> };
  /**
   * The newest audit entries, oldest first. The operator reads every entry (optionally one client's);
   * any other client only the entries of its own calls.
   */
  read_audit: { params: { limit?: number; client?: string }; result: AuditTail };
  /** Starts a server's sign-in (a loopback listener on the broker) and returns the URL to open. */
  begin_sign_in: { params: ByName; result: { name: string; url: string } };
  sign_out: { params: ByName; result: ServerStatus };
  /**
   * The editor hands over a VS Code account's token for a server with `auth: { type: vscode }`
   * (held in memory only); without `token` it is withdrawn. provider and scopes must be the server's.
   */
  set_account_token: {
    params: ByName & { provider: string; scopes: string[]; token?: string; account?: string };
    result: ServerStatus;
  };
  /**
   * `${input:NAME}`: the editor's value (held in memory only; without `value`, forgotten), or with
   * `reload`, re-read from the per-user store after `switchboard secret set|unset`.
   */
  set_input: {
    params: ByName & { value?: string; reload?: boolean };
    result: { name: string; source?: InputSource; servers: string[] };
  };
  /** The editor's workspace folders, given to upstreams as roots (with the registry root). */
  set_editor_roots: { params: { roots: Root[] }; result: { roots: Root[]; changed: boolean } };
}

export type ControlOperation = keyof ControlApi;
export type ParamsOf<K extends ControlOperation> = ControlApi[K]['params'];
export type ResultOf<K extends ControlOperation> = ControlApi[K]['result'];

/** The MCP tool name of an operation: `enable_server` → `switchboard__enable_server`. */
export type FacadeToolName<K extends ControlOperation = ControlOperation> = `switchboard__${K}`;
