// What the endpoint needs from the rest of the broker, and what it tells it about a request: who is
// calling (Identity), on which session and path (SessionContext), and the one interface (Router)
// through which every MCP method reaches the catalog, the control plane and the upstreams.
import type { CacheHints, CallLog, InputPassThrough, ListKey } from '../connection/connection';
import type { ServerRequestCaller } from '../connection/serverRequests';
import type { CallCancel } from '../shared/callCancel';
import type { TraceParent } from '../telemetry/telemetry';
import type { JsonObject, Prompt, Resource, ResourceTemplate, Tool } from '../shared/mcpTypes';

export interface Identity {
  /** The client's registry name, or `operator` for the editor's own full-scope identity. */
  client: string;
  operator: boolean;
}

export interface SessionContext {
  sessionId: string;
  identity: Identity;
  /** `undefined` for the aggregated endpoint, else the one server `/servers/<name>/mcp` serves. */
  server?: string;
}

export interface RequestExtra {
  /** The request's cancellation as an AbortSignal (on the session path made only when read). */
  signal: AbortSignal;
  /**
   * The same cancellation without a signal (shared/callCancel.ts), where the endpoint has one: the
   * per-call path passes this on so that a call nobody cancels never makes an AbortSignal.
   */
  cancel?: CallCancel;
  progressToken?: string | number;
  sendProgress(progress: { progress: number; total?: number; message?: string }): void;
  /** The calling session, for requests an upstream sends its client while handling this one. */
  caller?: ServerRequestCaller;
  /** A 2026-07-28 caller's io.modelcontextprotocol/logLevel: the log messages of this request, for it alone. */
  log?: CallLog;
  /** A 2026-07-28 caller of a per-server endpoint: its input_required exchange goes through verbatim. */
  passThrough?: InputPassThrough;
  /** The request's params._meta: telemetry reads its trace context (traceparent, tracestate) from it. */
  meta?: JsonObject;
  /**
   * While telemetry is on: the request's SERVER span (set by telemetry/tracedRouter.ts), passed down
   * explicitly as the parent of its upstream request and the trace id of its audit entry.
   */
  trace?: TraceParent;
}

/** What the endpoint serves; BrokerRouter (router.ts) implements it over the catalog and served servers. */
export interface Router {
  hasServer(name: string): boolean;
  instructions(server?: string): string | undefined;
  /**
   * `meta`: the list request's _meta, read by telemetry alone (its trace context). The endpoint passes
   * it, undefined or not, for a list it serves; a lookup of the broker's own passes none (no span).
   */
  listTools(ctx: SessionContext, meta?: JsonObject): Tool[];
  /** The cache hints of a list as this caller sees it; undefined: none to give (stale at once). */
  listHints?(ctx: SessionContext, key: ListKey): CacheHints | undefined;
  /** `task`: the request's `task` param (2025-11-25 tasks); the answer is then a CreateTaskResult. */
  callTool(
    ctx: SessionContext,
    name: string,
    args: JsonObject,
    meta: JsonObject | undefined,
    extra: RequestExtra,
    task?: JsonObject,
  ): Promise<JsonObject>;
  /** tasks/get, tasks/result, tasks/list, tasks/cancel: the session's own tasks only. */
  taskRequest?(ctx: SessionContext, method: string, params: JsonObject, extra: RequestExtra): Promise<JsonObject>;
  /** A session began: `notify` sends a notification on its GET stream (task status changes). */
  sessionOpened?(ctx: SessionContext, notify: (method: string, params: JsonObject) => void): void;
  /** A session ended: what the router kept for it (its tasks) is forgotten. */
  sessionClosed?(ctx: SessionContext): void;
  listPrompts(ctx: SessionContext, meta?: JsonObject): Prompt[];
  getPrompt(ctx: SessionContext, name: string, args: Record<string, string>, extra: RequestExtra): Promise<JsonObject>;
  listResources(ctx: SessionContext, meta?: JsonObject): Resource[];
  listResourceTemplates(ctx: SessionContext, meta?: JsonObject): ResourceTemplate[];
  readResource(ctx: SessionContext, uri: string, extra: RequestExtra): Promise<JsonObject>;
  subscribe(ctx: SessionContext, uri: string): Promise<void>;
  unsubscribe(ctx: SessionContext, uri: string): Promise<void>;
  complete(ctx: SessionContext, params: JsonObject, extra: RequestExtra): Promise<JsonObject>;
}
