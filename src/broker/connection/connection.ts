// The one interface the broker uses to talk to an upstream MCP server, stdio or remote, and the
// factory that picks the implementation. Nothing outside src/broker/connection imports the SDK client.
import type { LogRing } from '../logRing';
import type { JsonObject, Prompt, Resource, ResourceTemplate, Tool } from '../mcpTypes';
import { RemoteConnection } from './remoteConnection';
import type { ServerRequestCaller, ServerRequestHandler } from './serverRequests';
import { connectStdioEitherEra } from './eraDetection';

export interface StdioLaunch {
  transport: 'stdio';
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** A command line the server runs under (e.g. `unshare --net --`), for OS-level grant enforcement. */
  wrapper?: string[];
}
export interface RemoteLaunch {
  transport: 'sse' | 'http';
  url: string;
  headers: Record<string, string>;
}
export type UpstreamLaunch = StdioLaunch | RemoteLaunch;

export interface ConnectionEvents {
  toolsChanged(): void;
  promptsChanged(): void;
  resourcesChanged(): void;
  resourceUpdated(uri: string): void;
  log(params: JsonObject): void;
  /** The connection ended without `close()` being called: a crash or a dropped remote. */
  lost(reason: string): void;
  /**
   * Answers the requests the server sends its client (sampling, elicitation, roots); without it
   * they are refused as unknown methods.
   */
  serverRequest?: ServerRequestHandler;
}

export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs: number;
  onprogress?: (progress: { progress: number; total?: number; message?: string }) => void;
  /**
   * The result is only forwarded, never read: a large one may come back as a placeholder that
   * stands for the upstream's bytes (see rawJson.ts).
   */
  forward?: boolean;
  /** Whose call this is: requests the server sends while it is in flight may be for that caller. */
  caller?: ServerRequestCaller;
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
export interface UpstreamConnection {
  readonly info: ConnectedInfo;
  /** The server's process id, for a stdio server. */
  readonly pid: number | undefined;
  request(method: string, params: JsonObject, opts: CallOptions): Promise<JsonObject>;
  listTools(timeoutMs: number): Promise<Tool[]>;
  listPrompts(timeoutMs: number): Promise<Prompt[]>;
  listResources(timeoutMs: number): Promise<Resource[]>;
  listResourceTemplates(timeoutMs: number): Promise<ResourceTemplate[]>;
  close(): Promise<void>;
}

/** Starts (stdio) or reaches (remote) an upstream and completes the MCP handshake. */
export function connectUpstream(
  launch: UpstreamLaunch,
  events: ConnectionEvents,
  logs: LogRing,
  timeoutMs: number,
): Promise<UpstreamConnection> {
  if (launch.transport === 'stdio') return connectStdioEitherEra(launch, events, logs, timeoutMs);
  return RemoteConnection.connect(launch, events, logs, timeoutMs);
}
