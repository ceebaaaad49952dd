// What the broker's telemetry is to the rest of the broker: the requests it is told of and what it
// answers. Types only; telemetry.ts holds the running one, otelSdk.ts implements it.
import type { JsonObject } from '../shared/mcpTypes';
import type { LiveNumbers, ServerNumbers } from './liveNumbers';
import type { TelemetrySettings } from './settings';

/** A request the broker's endpoint serves (a SERVER span, mcp.server.operation.duration). */
export interface ServedRequest {
  /** mcp.method.name: tools/call, tools/list, prompts/get, resources/read, ... */
  method: string;
  /** The tool or prompt name, or the resource URI, as the caller named it. */
  target?: string;
  sessionId?: string;
  /** The client's registry name (never its token). */
  client: string;
  /** The per-server endpoint's server; undefined on the aggregated /mcp. */
  endpointServer?: string;
  /** The caller's params._meta: where the trace context (traceparent, tracestate) comes from. */
  meta?: JsonObject;
}

/** A request the broker sends one upstream (a CLIENT span, mcp.client.operation.duration). */
export interface UpstreamRequest {
  server: string;
  method: string;
  protocol?: string;
  trust?: string;
  /** The request being served that sent it (RequestExtra.trace): the CLIENT span's parent. */
  parent?: TraceParent;
}

/** Broker-wide numbers read when metrics are collected (gauges). */
export interface BrokerGauges {
  sessions: number;
  upstreamStates: Record<string, number>;
  pendingClientRequests: number;
  restarts: Record<string, number>;
  quarantinedTools: number;
  toolTokensPerClient: Record<string, number>;
}

/**
 * The trace context of the request running now, kept to be the parent of a span that starts later
 * outside it (a server→client request read from a stdio pipe, a launch a request caused). Opaque.
 */
export type TraceParent = { readonly traceParent: unique symbol };

/** A span around one operation of the broker's own (a server→client request, a refresh, a launch). */
export interface SpanAbout {
  name: string;
  kind: 'internal' | 'server' | 'client';
  /** Names and outcomes only: never arguments, results, command lines or secrets. */
  attributes: Record<string, string>;
  /** The span's parent: this trace, or none (null: a root span); undefined: the request running now. */
  parent?: TraceParent | null;
}

export interface Telemetry {
  readonly settings: TelemetrySettings;
  /**
   * Runs one served request inside its SERVER span (sync or async); records its duration. `run` gets
   * the span as the parent to pass on (no AsyncLocalStorage on the per-call path: the span is only
   * "running now" until run's first await).
   */
  serve<T>(request: ServedRequest, run: (trace: TraceParent) => T): T;
  /**
   * Runs one upstream request inside a CLIENT span, child of the request being served; `run` gets
   * the params with the span's trace context in `_meta` (traceparent, tracestate), and the span.
   */
  upstream(
    request: UpstreamRequest,
    params: JsonObject,
    run: (params: JsonObject, trace: TraceParent) => Promise<JsonObject>,
  ): Promise<JsonObject>;
  /** A request waits for its server to start (a lazy start, or a start in progress): an INTERNAL span. */
  waitedForStart(server: string, started: Promise<void>, parent?: TraceParent): Promise<void>;
  /**
   * The span running now, as the parent of a span started later elsewhere: the one whose synchronous
   * part is running (serve's, upstream's or span()'s run, until its first await); undefined outside one.
   */
  currentTrace(): TraceParent | undefined;
  /**
   * Runs `run` in a span of its own (an error ends it with error.type); `note` adds attributes that
   * are known only once it ran (who answered).
   */
  span<T>(about: SpanAbout, run: (note: (attributes: Record<string, string>) => void) => Promise<T>): Promise<T>;
  /** Runs `fn` outside any request's trace (what it starts outlives the request). */
  untraced<T>(fn: () => T): T;
  /** A session ended after `seconds` (mcp.server.session.duration). */
  sessionEnded(session: { client: string; endpointServer?: string }, seconds: number): void;
  /** The trace id of `trace`, else of the span running now (currentTrace), for log lines; if any. */
  traceId(trace?: TraceParent): string | undefined;
  /** Broker gauges are read from this when metrics are collected. */
  observe(gauges: () => BrokerGauges): void;
  /** Every metric in the Prometheus text format (GET /metrics). */
  prometheusText(): Promise<string>;
  /** Per-server requests, error rate, p50/p95 over the last minutes (the editor's numbers). */
  liveNumbers(): LiveNumbers;
  /** One server's numbers; undefined when it served nothing lately. */
  serverNumbers(server: string): ServerNumbers | undefined;
  /** Exports what is queued and stops. */
  shutdown(): Promise<void>;
}
