// Requests an upstream sends its client (sampling, elicitation, roots) while it handles calls: which
// callers may be the one it asks, and how the SDK client of a connection hands them on.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCodes, McpFailure, type JsonObject } from '../shared/mcpTypes';
import { UI_CLIENT_EXTENSION } from '../catalog/apps/appMeta';
import { telemetry, type TraceParent } from '../telemetry/telemetry';

/** The methods an upstream may send its client that the broker routes to a caller. */
export const SERVER_REQUEST_METHODS = new Set(['sampling/createMessage', 'elicitation/create', 'roots/list']);

/**
 * What the broker can answer on a caller's behalf; every upstream is told so at initialize. MCP
 * Apps too: the broker's lists are shared by every caller, so it asks for a server's apps once and
 * decides per caller what each sees (docs/mcp-apps.md).
 */
export const BROKER_CLIENT_CAPABILITIES = {
  sampling: { tools: {} },
  elicitation: { form: {}, url: {} },
  roots: { listChanged: true },
  extensions: UI_CLIENT_EXTENSION,
};

export interface ServerRequest {
  method: string;
  params: JsonObject;
  /** Aborted when the upstream cancels its request or the connection ends. */
  signal: AbortSignal;
  /**
   * While telemetry is on: the trace of the call the request belongs to (its span's parent), or
   * null when no one call is known; undefined: the request running now, if any.
   */
  trace?: TraceParent | null;
}

/** The session a forwarded call came from, able to put a request to its own client. */
export interface ServerRequestCaller {
  /** Calls with the same key come from one session. */
  readonly session: string;
  /** The caller's registry client name (for messages and the audit log). */
  readonly client: string;
  /**
   * The caller's protocol era when it is not a 2025-11-25 session ('2026-07-28' for a stateless
   * caller): a dual-era upstream is spoken to in the caller's own era (dualEraConnection.ts).
   */
  readonly protocol?: string;
  /** What the session's client declared at initialize (undefined before it did). */
  capabilities(): JsonObject | undefined;
  ask(request: ServerRequest): Promise<JsonObject>;
}

/**
 * Answers one server→client request. `callers` are the candidates: the caller of the call the
 * request is known to belong to, else one caller per session with a call in flight on the upstream.
 */
export type ServerRequestHandler = (request: ServerRequest, callers: ServerRequestCaller[]) => Promise<JsonObject>;

/** One caller per session, in the order given. */
export function oneCallerPerSession(callers: Iterable<ServerRequestCaller | undefined>): ServerRequestCaller[] {
  const bySession = new Map<string, ServerRequestCaller>();
  for (const caller of callers) if (caller && !bySession.has(caller.session)) bySession.set(caller.session, caller);
  return [...bySession.values()];
}

/**
 * The caller (and, while telemetry is on, the CLIENT span) of the request being sent in this async
 * context. A Streamable HTTP upstream answers a POST on its own SSE stream, and the SDK reads that
 * stream in the context of the request that opened it: a server→client request read from it is known
 * to belong to that call, and so is a sign-in refresh the request needed. Only remote upstreams' calls
 * run in one (telemetry carries a call's span explicitly, with no AsyncLocalStorage of its own).
 */
const relatedCall = new AsyncLocalStorage<{ caller?: ServerRequestCaller; trace?: TraceParent }>();

export function withRelatedCaller<T>(caller: ServerRequestCaller | undefined, run: () => T, trace?: TraceParent): T {
  return caller || trace ? relatedCall.run({ caller, trace }, run) : run();
}

/** The CLIENT span of the remote request being sent in this async context (a sign-in refresh's parent). */
export function relatedTrace(): TraceParent | undefined {
  return relatedCall.getStore()?.trace;
}

/** A connection's calls in flight, as the routing of server→client requests needs them. */
export interface CallsInFlight {
  /** One caller per session with a call in flight, when the request's own call is not known. */
  callers(): ServerRequestCaller[];
  /**
   * Pauses the time limit of every call in flight of these callers' sessions while a person
   * answers; the returned function lets the clocks run on.
   */
  hold(callers: ServerRequestCaller[]): () => void;
  /** While telemetry is on: the trace of this caller's session's call in flight (the first one). */
  traceOf?(caller: ServerRequestCaller): TraceParent | undefined;
}

/** Routes the server→client requests an SDK client receives to `handler`. */
export function routeServerRequests(
  client: Client,
  handler: () => ServerRequestHandler | undefined,
  calls: CallsInFlight,
): void {
  client.fallbackRequestHandler = async (request, extra) => {
    const answer = handler();
    if (!SERVER_REQUEST_METHODS.has(request.method) || !answer) {
      throw new McpFailure(ErrorCodes.MethodNotFound, `Method not found: ${request.method.slice(0, 100)}`);
    }
    const related = relatedCall.getStore()?.caller;
    const params = (request.params ?? {}) as JsonObject;
    const asked: ServerRequest = { method: request.method, params, signal: extra.signal };
    const callers = related ? [related] : calls.callers();
    // Read on its call's stream, the request's parent is that call's span; from a pipe, the one
    // session's call in flight is its parent (none when several sessions could be).
    if (telemetry()) {
      asked.trace = related ? relatedTrace() : (callers.length === 1 && calls.traceOf?.(callers[0])) || null;
    }
    const release = calls.hold(callers);
    try {
      return (await answer(asked, callers)) as never;
    } finally {
      release();
    }
  };
}

/** The trace of the first entry of this caller's session (recorded when its call was sent). */
export function traceOfSession(
  entries: Iterable<{ caller?: ServerRequestCaller; trace?: TraceParent }>,
  caller: ServerRequestCaller,
): TraceParent | undefined {
  for (const entry of entries) if (entry.caller?.session === caller.session && entry.trace) return entry.trace;
  return undefined;
}

/** Pauses the timers of the entries whose caller's session is one of `callers`'; returns the resume. */
export function holdTimers(
  entries: Iterable<{ caller?: ServerRequestCaller; timer: { pause(): void; resume(): void } }>,
  callers: ServerRequestCaller[],
): () => void {
  const sessions = new Set(callers.map((c) => c.session));
  const held = [...entries].filter((e) => e.caller && sessions.has(e.caller.session)).map((e) => e.timer);
  for (const timer of held) timer.pause();
  let released = false;
  return () => {
    if (released) return;
    released = true;
    for (const timer of held) timer.resume();
  };
}
