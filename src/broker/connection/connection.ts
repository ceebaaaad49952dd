// The one interface the broker uses to talk to an upstream MCP server, stdio or remote (connect.ts
// picks the implementation). Nothing outside src/broker/connection imports the SDK client.
import type { ServerOAuth } from './auth/serverOAuth';
import type { CallCancel } from '../shared/callCancel';
import type { JsonObject, Prompt, Resource, ResourceTemplate, Tool } from '../shared/mcpTypes';
import type { TraceParent } from '../telemetry/telemetry';
import type { ServerRequestCaller, ServerRequestHandler } from './serverRequests';

export interface StdioLaunch {
  transport: 'stdio';
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** A command line the server runs under (e.g. `unshare --net --`), for OS-level grant enforcement. */
  wrapper?: string[];
  /** Runs alongside the process (a sandbox's network proxy): opened before the spawn, closed after it ends. */
  companion?: LaunchCompanion;
}
export interface LaunchCompanion {
  open(): Promise<void>;
  close(): Promise<void>;
}
export interface RemoteLaunch {
  transport: 'sse' | 'http';
  url: string;
  headers: Record<string, string>;
  /** The server's sign-in (`auth` in its definition): every request carries its token. */
  auth?: ServerOAuth;
  /**
   * Open a 2025-11-25 session without probing the era: for the operator's own connection to its
   * broker, which needs what only a session has (the editor's GET stream, change notifications).
   */
  session?: boolean;
  /** A VS Code account's token (`auth: { type: vscode }`), read at each request: sent as a bearer token. */
  bearer?: () => string | undefined;
}
export type UpstreamLaunch = StdioLaunch | RemoteLaunch;

export interface ConnectionEvents {
  toolsChanged(): void;
  promptsChanged(): void;
  resourcesChanged(): void;
  resourceUpdated(uri: string): void;
  log(params: JsonObject): void;
  /**
   * The connection ended without `close()` being called: a crash or a dropped remote, or (with
   * `needsSignIn`) a remote whose sign-in expired, was revoked or lacks a scope.
   */
  lost(reason: string, needsSignIn?: boolean): void;
  /** A notifications/tasks/status (2025-11-25 tasks): the server's Task, under its own id. */
  taskStatus?(task: JsonObject): void;
  /**
   * Answers the requests the server sends its client (sampling, elicitation, roots); without it
   * they are refused as unknown methods.
   */
  serverRequest?: ServerRequestHandler;
  /**
   * What the client declares at initialize when `serverRequest` is set (default: everything the
   * broker can serve for its callers, BROKER_CLIENT_CAPABILITIES).
   */
  clientCapabilities?: JsonObject;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** The caller's cancellation when it has made no signal yet (the per-call path): read both through signalOf(). */
  cancel?: CallCancel;
  timeoutMs: number;
  onprogress?: (progress: { progress: number; total?: number; message?: string }) => void;
  /**
   * The result is only forwarded, never read: it may come back as a placeholder that
   * stands for the upstream's bytes (see rawJson.ts).
   */
  forward?: boolean;
  /** Whose call this is: requests the server sends while it is in flight may be for that caller. */
  caller?: ServerRequestCaller;
  /**
   * While telemetry is on: the call's span (the request served, then its CLIENT span), the parent of
   * a server→client request read from a pipe while the call is in flight.
   */
  trace?: TraceParent;
  /** The caller's own log messages (a 2026-07-28 caller that set io.modelcontextprotocol/logLevel). */
  log?: CallLog;
  /**
   * Between two 2026-07-28 parties (a per-server endpoint's caller, a 2026-07-28 upstream): the
   * request goes once, with the caller's capabilities and its inputResponses/requestState, and an
   * input_required result comes back as the server sent it. Ignored by a 2025 upstream.
   */
  passThrough?: InputPassThrough;
}

/** A call's cancellation as an AbortSignal, made now if the caller passed only its CallCancel. */
export function signalOf(opts: { signal?: AbortSignal; cancel?: CallCancel }): AbortSignal | undefined {
  return opts.signal ?? opts.cancel?.signal;
}

/** What a 2026-07-28 caller sends that the broker passes on verbatim (see CallOptions.passThrough). */
export interface InputPassThrough {
  capabilities: JsonObject;
  inputResponses?: unknown;
  requestState?: unknown;
}

/** Log messages a call's caller asked for, at or above `level`, sent on that call's own stream. */
export interface CallLog {
  level: string;
  send(params: JsonObject): void;
}

export interface ConnectedInfo {
  serverName?: string;
  serverVersion?: string;
  instructions?: string;
  capabilities: JsonObject;
  /** The protocol revision spoken with the server ('2026-07-28', '2025-11-25', …), when known. */
  protocol?: string;
}

/**
 * A connected upstream. Failures of `request` and of `connect` are ConnectionErrors (see
 * connectionError.ts), except a cancellation by the caller's signal, which rejects with its reason.
 */
/** The kinds of list a server gives cache hints for. */
export type ListKey = 'tools' | 'prompts' | 'resources' | 'resourceTemplates';

/** 2026-07-28's cache hints on a result: how long it stays fresh, and whether it may be shared. */
export interface CacheHints {
  ttlMs: number;
  cacheScope: 'public' | 'private';
}

export interface UpstreamConnection {
  readonly info: ConnectedInfo;
  /** The cache hints the server gave with its last listing of a kind (a 2026-07-28 server only). */
  listHints?(key: ListKey): CacheHints | undefined;
  /** The server's process id, for a stdio server. */
  readonly pid: number | undefined;
  request(method: string, params: JsonObject, opts: CallOptions): Promise<JsonObject>;
  listTools(timeoutMs: number): Promise<Tool[]>;
  listPrompts(timeoutMs: number): Promise<Prompt[]>;
  listResources(timeoutMs: number): Promise<Resource[]>;
  listResourceTemplates(timeoutMs: number): Promise<ResourceTemplate[]>;
  /** Sends `notifications/roots/list_changed` (the roots the broker gives for its callers changed). */
  notifyRootsChanged(): Promise<void>;
  close(): Promise<void>;
}
