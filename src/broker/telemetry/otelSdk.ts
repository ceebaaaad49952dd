// The OpenTelemetry side of the broker's telemetry, loaded only when telemetry is on (telemetry.ts
// requires it; the build bundles it apart as dist/telemetry-sdk.js). Spans and metrics follow the
// OpenTelemetry semantic conventions for MCP; arguments, results, error messages and tokens are
// never put on a span or a metric (a test searches everything exported for canaries).
import {
  ROOT_CONTEXT,
  SpanKind,
  defaultTextMapGetter,
  trace,
  type Attributes,
  type Histogram,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPMetricExporter as OtlpGrpcMetrics } from '@opentelemetry/exporter-metrics-otlp-grpc';
import { OTLPMetricExporter as OtlpJsonMetrics } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as OtlpProtoMetrics } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPTraceExporter as OtlpGrpcTraces } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as OtlpJsonTraces } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtoTraces } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AggregationTemporality,
  AggregationType,
  InstrumentType,
  MeterProvider,
  MetricReader,
  PeriodicExportingMetricReader,
  type IMetricReader,
} from '@opentelemetry/sdk-metrics';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { JsonObject } from '../shared/mcpTypes';
import { copyWith, copyWithout } from '../shared/objects';
import { BROKER_VERSION } from '../shared/version';
import { LiveNumbersRecorder, type LiveNumbers, type ServerNumbers } from './liveNumbers';
import { prometheusText } from './prometheusText';
import type { OtlpTarget, TelemetrySettings } from './settings';
import type { BrokerGauges, ServedRequest, SpanAbout, Telemetry, TraceParent, UpstreamRequest } from './types';
import { observeGauges } from './gauges';
import { AttributeSets, metricAttributes, sessionAttributes, type AttributeSet } from './attributeSets';
import { installAttributeHash } from './attributeHash';
import { SpanRecorder, injectTraceContext, remoteParent, type RecordedSpan, type SpanParent } from './spanRecorder';

// The span kinds read once: an imported binding of the bundled API is a getter (two, with the API's
// own) on every read, seen in the per-call CPU profile (stop 44).
const SERVER = SpanKind.SERVER;
const CLIENT = SpanKind.CLIENT;

/** The MCP conventions' recommended buckets for operation durations, in seconds. */
const DURATION_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];

/** A reader the broker collects from on demand: GET /metrics. */
class PullReader extends MetricReader {
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** Every metric instrument kind: a reader serves /metrics only if all of them are cumulative. */
const INSTRUMENT_TYPES = Object.values(InstrumentType);

/**
 * The metric readers: one exporting over OTLP when metrics are exported, and what GET /metrics
 * collects from. Each reader keeps a storage of its own per instrument, and the SDK hashes a record's
 * attributes once per storage: one reader is half the cost of two on every call. An exporter that
 * keeps cumulative sums with the default aggregations (the OTLP default, what Prometheus wants) serves /metrics too, as a
 * collection of cumulative sums takes nothing from the next export; a delta exporter would lose to
 * /metrics what it collected, so it gets a reader of its own beside.
 */
function metricReaders(settings: TelemetrySettings): { all: IMetricReader[]; pull: MetricReader } {
  if (!settings.metrics) {
    const pull = new PullReader();
    return { all: [pull], pull };
  }
  const exporting = new PeriodicExportingMetricReader({
    exporter: metricExporter(settings.metrics),
    exportIntervalMillis: settings.metrics.intervalMs,
    exportTimeoutMillis: Math.min(30_000, settings.metrics.intervalMs),
  });
  // The exporter's aggregations must be the SDK's defaults too (explicit-bucket histograms, as
  // prometheusText.ts reads them), not, say, exponential histograms asked for by the environment.
  const servesBoth = INSTRUMENT_TYPES.every(
    (type) =>
      exporting.selectAggregationTemporality(type) === AggregationTemporality.CUMULATIVE &&
      exporting.selectAggregation(type).type === AggregationType.DEFAULT,
  );
  if (servesBoth) return { all: [exporting], pull: exporting };
  const pull = new PullReader();
  return { all: [pull, exporting], pull };
}

function traceExporter(target: OtlpTarget) {
  const config = target.url ? { url: target.url } : {};
  if (target.protocol === 'grpc') return new OtlpGrpcTraces(config);
  return target.protocol === 'http/json' ? new OtlpJsonTraces(config) : new OtlpProtoTraces(config);
}

function metricExporter(target: OtlpTarget) {
  const config = target.url ? { url: target.url } : {};
  if (target.protocol === 'grpc') return new OtlpGrpcMetrics(config);
  return target.protocol === 'http/json' ? new OtlpJsonMetrics(config) : new OtlpProtoMetrics(config);
}

/** error.type for a failure: the JSON-RPC error code when there is one, else the error's class. */
function errorType(err: unknown): string {
  const code = (err as { code?: unknown } | undefined)?.code;
  if (typeof code === 'number') return String(code);
  return err instanceof Error ? err.name || 'Error' : 'Error';
}

/**
 * A copy of the caller's _meta without its trace context (the upstream hears the broker's CLIENT
 * span instead), made key by key: no rest-spread or `delete` (shared/objects.ts says why).
 */
function withoutTraceContext(meta: JsonObject | undefined): JsonObject {
  return copyWithout(meta, 'traceparent', 'tracestate');
}

function isThenable<T>(value: T): value is T & PromiseLike<Awaited<T>> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

class OtelTelemetry implements Telemetry {
  /**
   * The span whose synchronous part is running now (serve's, upstream's and span()'s run, until
   * their first await). No AsyncLocalStorage: in Node 20 an AsyncLocalStorage's first run() turns on
   * promise hooks for the whole process (~10–20 µs per call in the broker, docs/performance.md), and
   * one launch span at start-up would do it. A call's span travels explicitly instead
   * (RequestExtra.trace, CallOptions.trace).
   */
  private current: SpanParent | undefined;
  private readonly propagator = new W3CTraceContextPropagator();
  private readonly meterProvider: MeterProvider;
  private readonly spans: SpanRecorder;
  /** What GET /metrics collects from: the exporting reader when it can serve both (see metricReaders). */
  private readonly pull: MetricReader;
  private readonly serverDuration: Histogram;
  private readonly clientDuration: Histogram;
  private readonly sessionDuration: Histogram;
  private readonly live = new LiveNumbersRecorder();
  private readonly attributeSets = new AttributeSets();

  constructor(readonly settings: TelemetrySettings) {
    installAttributeHash();
    const resource = resourceFromAttributes({
      'service.name': settings.serviceName,
      'service.version': BROKER_VERSION,
    });
    const readers = metricReaders(settings);
    this.pull = readers.pull;
    this.meterProvider = new MeterProvider({ resource, readers: readers.all });
    // The library's batch queue and exporter: 2048 spans at most (past it new ones are dropped and
    // counted in its otel.sdk.processor.span.processed), batches of 512 every 5 s, one export in
    // flight; the OTEL_BSP_* variables change those (the processor reads them).
    const processor = settings.traces
      ? new BatchSpanProcessor(traceExporter(settings.traces), {
          selfObsMeterProvider: this.meterProvider,
        } as ConstructorParameters<typeof BatchSpanProcessor>[1])
      : undefined;
    this.spans = new SpanRecorder(resource, 'mcp-switchboard', BROKER_VERSION, processor);
    const meter = this.meterProvider.getMeter('mcp-switchboard', BROKER_VERSION);
    const advice = { explicitBucketBoundaries: DURATION_BUCKETS };
    this.serverDuration = meter.createHistogram('mcp.server.operation.duration', {
      unit: 's',
      description: 'Duration of the MCP requests the broker served.',
      advice,
    });
    this.clientDuration = meter.createHistogram('mcp.client.operation.duration', {
      unit: 's',
      description: 'Duration of the MCP requests the broker sent its upstream servers.',
      advice,
    });
    this.sessionDuration = meter.createHistogram('mcp.server.session.duration', {
      unit: 's',
      description: 'Duration of the MCP sessions the broker served.',
      advice: {
        explicitBucketBoundaries: [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600],
      },
    });
  }

  /** The caller's trace context from its _meta, when it sent one. */
  private callerParent(meta: JsonObject | undefined): SpanParent | undefined {
    if (meta === undefined || (meta.traceparent === undefined && meta.tracestate === undefined)) return undefined;
    return remoteParent(trace.getSpanContext(this.propagator.extract(ROOT_CONTEXT, meta, defaultTextMapGetter)));
  }

  serve<T>(request: ServedRequest, run: (trace: TraceParent) => T): T {
    const parent = this.callerParent(request.meta);
    const set = this.attributeSets.served(request.method, request.target, request.client, request.endpointServer);
    // The session id is on the span only, never a metric's attribute (sessionAttributes: one per session).
    const attributes = request.sessionId ? sessionAttributes(set, request.sessionId) : set.attributes;
    const span = this.spans.start(set.name, SERVER, attributes, parent);
    if (request.method === 'resources/read' && request.target !== undefined)
      span.setAttribute('mcp.resource.uri', request.target);
    let result: T;
    const outer = this.current;
    this.current = span;
    try {
      result = run(span as unknown as TraceParent);
    } catch (error) {
      this.finish(span, this.serverDuration, set, error, undefined);
      throw error;
    } finally {
      this.current = outer;
    }
    if (!isThenable(result)) {
      this.finish(span, this.serverDuration, set, undefined, result);
      return result;
    }
    // A native promise (the router's async methods) is followed directly: no promise of our own around it.
    const settled = result instanceof Promise ? (result as Promise<unknown>) : Promise.resolve(result);
    return settled.then(
      (value) => {
        this.finish(span, this.serverDuration, set, undefined, value);
        return value;
      },
      (error: unknown) => {
        this.finish(span, this.serverDuration, set, error, undefined);
        throw error;
      },
    ) as T;
  }

  async upstream(
    request: UpstreamRequest,
    params: JsonObject,
    run: (params: JsonObject, trace: TraceParent) => Promise<JsonObject>,
  ): Promise<JsonObject> {
    const parent = (request.parent as SpanParent | undefined) ?? this.running();
    const target =
      typeof params.name === 'string' ? params.name : typeof params.uri === 'string' ? params.uri : undefined;
    const set = this.attributeSets.upstream(request.method, target, request.server, request.protocol, request.trust);
    const span = this.spans.start(set.name, CLIENT, set.attributes, parent);
    if (request.method === 'resources/read' && target !== undefined) span.setAttribute('mcp.resource.uri', target);
    // The upstream hears this span as its parent, in _meta as the conventions say; the caller's own
    // traceparent (the parent of the broker's SERVER span) is replaced, not passed through.
    const meta = withoutTraceContext(params._meta as JsonObject | undefined);
    injectTraceContext(span.spanContext(), meta);
    // The span is the one running until run's first await; written out, not runAs: no closure per call.
    const outer = this.current;
    this.current = span;
    let sending: Promise<JsonObject>;
    try {
      sending = run(copyWith(params, '_meta', meta), span as unknown as TraceParent);
    } catch (error) {
      sending = Promise.reject(error);
    } finally {
      this.current = outer;
    }
    try {
      const result = await sending;
      const failed = this.finish(span, this.clientDuration, set, undefined, result);
      this.live.record(request.server, span.endedAt - span.startedAt, failed);
      return result;
    } catch (error) {
      this.finish(span, this.clientDuration, set, error, undefined);
      this.live.record(request.server, span.endedAt - span.startedAt, true);
      throw error;
    }
  }

  /** Ends a span and records its duration; true when the request failed (an error or a tool error). */
  private finish(
    span: RecordedSpan,
    histogram: Histogram,
    set: AttributeSet,
    error: unknown,
    result: unknown,
  ): boolean {
    let type: string | undefined;
    if (error !== undefined) type = errorType(error);
    else if ((result as { isError?: unknown } | undefined)?.isError === true) type = 'tool_error';
    if (type !== undefined) span.failed(type);
    const ended = span.end();
    histogram.record((ended - span.startedAt) / 1000, metricAttributes(set, type));
    return type !== undefined;
  }

  /** The parent of a span started now: the span whose synchronous part is running, if any. */
  private running(): SpanParent | undefined {
    return this.current;
  }

  /** Runs the synchronous part of `run` with `span` as the one running now. */
  private runAs<T>(span: SpanParent, run: () => T): T {
    const outer = this.current;
    this.current = span;
    try {
      return run();
    } finally {
      this.current = outer;
    }
  }

  waitedForStart(server: string, started: Promise<void>, parent?: TraceParent): Promise<void> {
    const attributes: Attributes = { 'switchboard.server': server };
    const cause = (parent as SpanParent | undefined) ?? this.running();
    const span = this.spans.start(`start ${server}`, SpanKind.INTERNAL, attributes, cause);
    return started.then(
      () => void span.end(),
      (error: unknown) => {
        span.failed(errorType(error));
        span.end();
        throw error;
      },
    );
  }

  currentTrace(): TraceParent | undefined {
    return this.running() as TraceParent | undefined;
  }

  async span<T>(about: SpanAbout, run: (note: (attributes: Record<string, string>) => void) => Promise<T>): Promise<T> {
    const parent = about.parent === null ? undefined : ((about.parent as SpanParent | undefined) ?? this.running());
    const kind = { internal: SpanKind.INTERNAL, server: SpanKind.SERVER, client: SpanKind.CLIENT }[about.kind];
    // A copy: the caller's object is its own, and spans keep their attributes until exported.
    const span = this.spans.start(about.name, kind, { ...about.attributes }, parent);
    try {
      const result = await this.runAs(span, () => run((attributes) => span.setAttributes(attributes)));
      span.end();
      return result;
    } catch (error) {
      span.failed(errorType(error));
      span.end();
      throw error;
    }
  }

  untraced<T>(fn: () => T): T {
    const outer = this.current;
    this.current = undefined;
    try {
      return fn();
    } finally {
      this.current = outer;
    }
  }

  sessionEnded(session: { client: string; endpointServer?: string }, seconds: number): void {
    const attributes: Attributes = { 'switchboard.client': session.client };
    if (session.endpointServer !== undefined) attributes['switchboard.server'] = session.endpointServer;
    this.sessionDuration.record(seconds, attributes);
  }

  traceId(trace?: TraceParent): string | undefined {
    return ((trace as SpanParent | undefined) ?? this.running())?.spanContext().traceId;
  }

  observe(gauges: () => BrokerGauges): void {
    observeGauges(this.meterProvider.getMeter('mcp-switchboard', BROKER_VERSION), gauges);
  }

  async prometheusText(): Promise<string> {
    const { resourceMetrics } = await this.pull.collect();
    return prometheusText(resourceMetrics);
  }

  liveNumbers(): LiveNumbers {
    return this.live.read();
  }

  serverNumbers(server: string): ServerNumbers | undefined {
    return this.live.readServer(server);
  }

  async shutdown(): Promise<void> {
    await Promise.allSettled([this.spans.shutdown(), this.meterProvider.shutdown()]);
  }
}

export function createTelemetry(settings: TelemetrySettings): Telemetry {
  return new OtelTelemetry(settings);
}
