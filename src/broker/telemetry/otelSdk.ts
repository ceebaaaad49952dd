// The OpenTelemetry side of the broker's telemetry, loaded only when telemetry is on (telemetry.ts
// requires it; the build bundles it apart as dist/telemetry-sdk.js). Spans and metrics follow the
// OpenTelemetry semantic conventions for MCP; arguments, results, error messages and tokens are
// never put on a span or a metric (a test searches everything exported for canaries).
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  defaultTextMapGetter,
  defaultTextMapSetter,
  trace,
  type Attributes,
  type Context,
  type Histogram,
  type Span,
  type Tracer,
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
  MeterProvider,
  MetricReader,
  PeriodicExportingMetricReader,
  type IMetricReader,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { JsonObject } from '../shared/mcpTypes';
import { BROKER_VERSION } from '../shared/version';
import { LiveNumbersRecorder, type LiveNumbers, type ServerNumbers } from './liveNumbers';
import { prometheusText } from './prometheusText';
import type { OtlpTarget, TelemetrySettings } from './settings';
import type { BrokerGauges, ServedRequest, SpanAbout, Telemetry, TraceParent, UpstreamRequest } from './types';
import { observeGauges } from './gauges';

/** The MCP conventions' recommended buckets for operation durations, in seconds. */
const DURATION_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];
/** Spans waiting for export, at most; past it new ones are dropped and counted (otel.sdk.processor.span.processed). */
const SPAN_QUEUE = 2048;

/** A reader the broker collects from on demand: GET /metrics. */
class PullReader extends MetricReader {
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
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

function isThenable<T>(value: T): value is T & PromiseLike<Awaited<T>> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/** The name a request acts on, for the span's name and gen_ai.tool.name / gen_ai.prompt.name. */
function targetAttributes(method: string, target: string | undefined): Attributes {
  if (target === undefined) return {};
  if (method === 'tools/call') return { 'gen_ai.tool.name': target, 'gen_ai.operation.name': 'execute_tool' };
  if (method === 'prompts/get') return { 'gen_ai.prompt.name': target };
  if (method === 'resources/read') return { 'mcp.resource.uri': target };
  return {};
}

class OtelTelemetry implements Telemetry {
  private readonly context = new AsyncLocalStorage<Context>();
  private readonly propagator = new W3CTraceContextPropagator();
  private readonly tracerProvider: BasicTracerProvider;
  private readonly meterProvider: MeterProvider;
  private readonly tracer: Tracer;
  private readonly pull = new PullReader();
  private readonly serverDuration: Histogram;
  private readonly clientDuration: Histogram;
  private readonly sessionDuration: Histogram;
  private readonly live = new LiveNumbersRecorder();

  constructor(readonly settings: TelemetrySettings) {
    const resource = resourceFromAttributes({
      'service.name': settings.serviceName,
      'service.version': BROKER_VERSION,
    });
    const readers: IMetricReader[] = [this.pull];
    if (settings.metrics) {
      readers.push(
        new PeriodicExportingMetricReader({
          exporter: metricExporter(settings.metrics),
          exportIntervalMillis: settings.metrics.intervalMs,
          exportTimeoutMillis: Math.min(30_000, settings.metrics.intervalMs),
        }),
      );
    }
    this.meterProvider = new MeterProvider({ resource, readers });
    const spanProcessors: SpanProcessor[] = [];
    if (settings.traces) {
      spanProcessors.push(
        new BatchSpanProcessor(traceExporter(settings.traces), {
          maxQueueSize: SPAN_QUEUE,
          // The processor's own metrics count the spans it dropped on a full queue.
          selfObsMeterProvider: this.meterProvider,
        } as ConstructorParameters<typeof BatchSpanProcessor>[1]),
      );
    }
    this.tracerProvider = new BasicTracerProvider({ resource, spanProcessors });
    this.tracer = this.tracerProvider.getTracer('mcp-switchboard', BROKER_VERSION);
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

  serve<T>(request: ServedRequest, run: () => T): T {
    const parent = request.meta
      ? this.propagator.extract(ROOT_CONTEXT, request.meta, defaultTextMapGetter)
      : ROOT_CONTEXT;
    const attributes: Attributes = {
      'mcp.method.name': request.method,
      ...targetAttributes(request.method, request.target),
      'switchboard.client': request.client,
    };
    if (request.sessionId) attributes['mcp.session.id'] = request.sessionId;
    if (request.endpointServer !== undefined) attributes['switchboard.server'] = request.endpointServer;
    const name =
      request.target !== undefined && request.method !== 'resources/read'
        ? `${request.method} ${request.target}`
        : request.method;
    const span = this.tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
    const started = performance.now();
    const finish = (outcome: { error?: unknown; result?: unknown }): void => {
      this.finish(span, this.serverDuration, attributes, started, outcome);
    };
    let result: T;
    try {
      result = this.context.run(trace.setSpan(parent, span), run);
    } catch (error) {
      finish({ error });
      throw error;
    }
    if (!isThenable(result)) {
      finish({ result });
      return result;
    }
    return Promise.resolve(result).then(
      (value) => {
        finish({ result: value });
        return value;
      },
      (error: unknown) => {
        finish({ error });
        throw error;
      },
    ) as T;
  }

  async upstream(
    request: UpstreamRequest,
    params: JsonObject,
    run: (params: JsonObject) => Promise<JsonObject>,
  ): Promise<JsonObject> {
    const parent = this.context.getStore() ?? ROOT_CONTEXT;
    const target =
      typeof params.name === 'string' ? params.name : typeof params.uri === 'string' ? params.uri : undefined;
    const attributes: Attributes = {
      'mcp.method.name': request.method,
      ...targetAttributes(request.method, target),
      'switchboard.server': request.server,
    };
    if (request.protocol) attributes['mcp.protocol.version'] = request.protocol;
    if (request.trust) attributes['switchboard.trust'] = request.trust;
    const name =
      target !== undefined && request.method !== 'resources/read' ? `${request.method} ${target}` : request.method;
    const span = this.tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, parent);
    const ctx = trace.setSpan(parent, span);
    // The upstream hears this span as its parent, in _meta as the conventions say; the caller's own
    // traceparent (the parent of the broker's SERVER span) is replaced, not passed through.
    const { traceparent: _tp, tracestate: _ts, ...meta } = (params._meta ?? {}) as JsonObject;
    this.propagator.inject(ctx, meta, defaultTextMapSetter);
    const started = performance.now();
    try {
      const result = await this.context.run(ctx, () => run({ ...params, _meta: meta }));
      const failed = this.finish(span, this.clientDuration, attributes, started, { result });
      this.live.record(request.server, performance.now() - started, failed);
      return result;
    } catch (error) {
      this.finish(span, this.clientDuration, attributes, started, { error });
      this.live.record(request.server, performance.now() - started, true);
      throw error;
    }
  }

  /** Ends a span and records its duration; true when the request failed (an error or a tool error). */
  private finish(
    span: Span,
    histogram: Histogram,
    attributes: Attributes,
    started: number,
    outcome: { error?: unknown; result?: unknown },
  ): boolean {
    const seconds = (performance.now() - started) / 1000;
    let type: string | undefined;
    if (outcome.error !== undefined) type = errorType(outcome.error);
    else if ((outcome.result as { isError?: unknown } | undefined)?.isError === true) type = 'tool_error';
    const recorded: Attributes = { ...attributes };
    // A resource URI is one value per resource: on the span, not on the metric (its cardinality).
    delete recorded['mcp.resource.uri'];
    delete recorded['mcp.session.id'];
    if (type !== undefined) {
      recorded['error.type'] = type;
      span.setAttribute('error.type', type);
      // The status says that it failed, never the message: messages can echo arguments.
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    histogram.record(seconds, recorded);
    span.end();
    return type !== undefined;
  }

  waitedForStart(server: string, started: Promise<void>): Promise<void> {
    const parent = this.context.getStore() ?? ROOT_CONTEXT;
    const attributes: Attributes = { 'switchboard.server': server };
    const span = this.tracer.startSpan(`start ${server}`, { kind: SpanKind.INTERNAL, attributes }, parent);
    return started.then(
      () => span.end(),
      (error: unknown) => {
        span.setAttribute('error.type', errorType(error));
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
        throw error;
      },
    );
  }

  currentTrace(): TraceParent | undefined {
    return this.context.getStore() as TraceParent | undefined;
  }

  async span<T>(about: SpanAbout, run: (note: (attributes: Record<string, string>) => void) => Promise<T>): Promise<T> {
    const parent =
      about.parent === null
        ? ROOT_CONTEXT
        : ((about.parent as Context | undefined) ?? this.context.getStore() ?? ROOT_CONTEXT);
    const kind = { internal: SpanKind.INTERNAL, server: SpanKind.SERVER, client: SpanKind.CLIENT }[about.kind];
    const span = this.tracer.startSpan(about.name, { kind, attributes: about.attributes }, parent);
    try {
      const result = await this.context.run(trace.setSpan(parent, span), () =>
        run((attributes) => span.setAttributes(attributes)),
      );
      span.end();
      return result;
    } catch (error) {
      span.setAttribute('error.type', errorType(error));
      // The status says that it failed, never the message: messages can echo arguments.
      span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
      throw error;
    }
  }

  untraced<T>(fn: () => T): T {
    return this.context.exit(fn);
  }

  sessionEnded(session: { client: string; endpointServer?: string }, seconds: number): void {
    const attributes: Attributes = { 'switchboard.client': session.client };
    if (session.endpointServer !== undefined) attributes['switchboard.server'] = session.endpointServer;
    this.sessionDuration.record(seconds, attributes);
  }

  traceId(): string | undefined {
    const ctx = this.context.getStore();
    const span = ctx && trace.getSpan(ctx);
    return span?.spanContext().traceId;
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
    await Promise.allSettled([this.tracerProvider.shutdown(), this.meterProvider.shutdown()]);
  }
}

export function createTelemetry(settings: TelemetrySettings): Telemetry {
  return new OtelTelemetry(settings);
}
