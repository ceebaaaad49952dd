// A loopback OTLP collector for the telemetry tests: a node:http server that takes what an
// OpenTelemetry exporter posts to /v1/traces and /v1/metrics, or (startGrpc) a @grpc/grpc-js server
// of the OTLP TraceService and MetricsService; it decodes what it receives (protobuf with protobufjs
// over the OTLP proto messages below, or OTLP JSON) and keeps every decoded span and metric, and
// the raw bodies, for a test to search.
import * as http from 'node:http';
import * as grpc from '@grpc/grpc-js';
import type { AddressInfo } from 'node:net';
import * as protobuf from 'protobufjs';

/**
 * The OTLP messages the collector decodes, as opentelemetry-proto (v1) defines them: field numbers
 * and types from opentelemetry/proto/{common,resource,trace,metrics}/v1 and collector/*. Fields
 * the tests do not read are left out (protobuf skips what a message does not declare).
 */
const OTLP_PROTO = `
syntax = "proto3";
package otlp;
message AnyValue {
  oneof value {
    string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4;
    ArrayValue array_value = 5; KeyValueList kvlist_value = 6; bytes bytes_value = 7;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message InstrumentationScope { string name = 1; string version = 2; }
message Resource { repeated KeyValue attributes = 1; }
message Status { string message = 2; int32 code = 3; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4; string name = 5;
  int32 kind = 6; fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9; Status status = 15; fixed32 flags = 16;
}
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message NumberDataPoint {
  fixed64 start_time_unix_nano = 2; fixed64 time_unix_nano = 3;
  oneof value { double as_double = 4; sfixed64 as_int = 6; }
  repeated KeyValue attributes = 7;
}
message HistogramDataPoint {
  fixed64 start_time_unix_nano = 2; fixed64 time_unix_nano = 3; fixed64 count = 4; optional double sum = 5;
  repeated fixed64 bucket_counts = 6; repeated double explicit_bounds = 7; repeated KeyValue attributes = 9;
}
message Gauge { repeated NumberDataPoint data_points = 1; }
message Sum { repeated NumberDataPoint data_points = 1; int32 aggregation_temporality = 2; bool is_monotonic = 3; }
message Histogram { repeated HistogramDataPoint data_points = 1; int32 aggregation_temporality = 2; }
message Metric {
  string name = 1; string description = 2; string unit = 3;
  oneof data { Gauge gauge = 5; Sum sum = 7; Histogram histogram = 9; }
}
message ScopeMetrics { InstrumentationScope scope = 1; repeated Metric metrics = 2; }
message ResourceMetrics { Resource resource = 1; repeated ScopeMetrics scope_metrics = 2; }
message ExportMetricsServiceRequest { repeated ResourceMetrics resource_metrics = 1; }
`;

const root = protobuf.parse(OTLP_PROTO, { keepCase: false }).root;
const TraceRequest = root.lookupType('otlp.ExportTraceServiceRequest');
const MetricsRequest = root.lookupType('otlp.ExportMetricsServiceRequest');
const TraceResponse = '';

export type Attributes = Record<string, string | number | boolean>;

export interface CollectedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** 2 SERVER, 3 CLIENT (SpanKind in the proto). */
  kind: number;
  attributes: Attributes;
  statusCode: number;
  serviceName: string;
  /** The rest of what a span carries, for comparing two recorders' output field by field. */
  traceState: string;
  flags: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  scope: { name: string; version: string };
}

export interface CollectedPoint {
  attributes: Attributes;
  value?: number;
  count?: number;
  sum?: number;
}

export interface CollectedMetric {
  name: string;
  unit: string;
  points: CollectedPoint[];
}

type Any = Record<string, unknown>;

function hex(value: unknown): string {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('hex');
  // OTLP JSON gives ids as hex strings already.
  return typeof value === 'string' ? value.toLowerCase() : '';
}

function anyValue(v: Any | undefined): string | number | boolean {
  if (!v) return '';
  const x = v.stringValue ?? v.boolValue ?? v.intValue ?? v.doubleValue;
  if (typeof x === 'object' && x !== null) return Number(String(x)); // a protobufjs Long
  return typeof x === 'string' && v.intValue !== undefined ? Number(x) : (x as string | number | boolean);
}

function attributes(list: unknown): Attributes {
  const out: Attributes = {};
  for (const kv of (list as Any[] | undefined) ?? []) out[kv.key as string] = anyValue(kv.value as Any);
  return out;
}

function num(v: unknown): number {
  return typeof v === 'object' && v !== null ? Number(String(v)) : Number(v);
}

export class OtlpCollector {
  readonly spans: CollectedSpan[] = [];
  readonly metrics: CollectedMetric[] = [];
  /** Every body as received (protobuf or JSON), for the canary search. */
  readonly rawBodies: Buffer[] = [];
  readonly contentTypes = new Set<string>();
  private server?: http.Server;
  private grpcServer?: grpc.Server;
  /** The gRPC method paths called, e.g. /opentelemetry.proto.collector.trace.v1.TraceService/Export. */
  readonly grpcCalls: string[] = [];

  /**
   * Serves OTLP over gRPC (insecure, loopback) instead: the two Export methods, their messages kept
   * as raw Buffers (no serializer but the identity) and decoded here like the HTTP bodies.
   */
  async startGrpc(): Promise<string> {
    const server = new grpc.Server();
    const raw = { serialize: (b: Buffer) => b, deserialize: (b: Buffer) => b };
    const method = (path: string) => ({
      path,
      requestStream: false,
      responseStream: false,
      requestSerialize: raw.serialize,
      requestDeserialize: raw.deserialize,
      responseSerialize: raw.serialize,
      responseDeserialize: raw.deserialize,
    });
    const exported =
      (path: string, take: (body: Buffer) => void): grpc.handleUnaryCall<Buffer, Buffer> =>
      (call, callback) => {
        this.grpcCalls.push(path);
        this.rawBodies.push(call.request);
        try {
          take(call.request);
        } catch (err) {
          return callback({ code: grpc.status.INVALID_ARGUMENT, details: String(err) });
        }
        // An empty Export*ServiceResponse: full success.
        callback(null, Buffer.alloc(0));
      };
    const traces = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';
    const metrics = '/opentelemetry.proto.collector.metrics.v1.MetricsService/Export';
    server.addService({ Export: method(traces) } as grpc.ServiceDefinition, {
      Export: exported(traces, (b) => this.takeSpans(this.decode(TraceRequest, b))),
    });
    server.addService({ Export: method(metrics) } as grpc.ServiceDefinition, {
      Export: exported(metrics, (b) => this.takeMetrics(this.decode(MetricsRequest, b))),
    });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
        err ? reject(err) : resolve(p),
      ),
    );
    this.grpcServer = server;
    return `http://127.0.0.1:${port}`;
  }

  /** Serves OTLP/HTTP on `host` (loopback unless a test needs an address off it). */
  async start(host = '127.0.0.1'): Promise<string> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        this.rawBodies.push(body);
        const type = String(req.headers['content-type'] ?? '');
        this.contentTypes.add(type.split(';')[0]);
        const json = type.includes('json');
        try {
          if (req.url === '/v1/traces')
            this.takeSpans(json ? JSON.parse(body.toString('utf8')) : this.decode(TraceRequest, body));
          else if (req.url === '/v1/metrics')
            this.takeMetrics(json ? JSON.parse(body.toString('utf8')) : this.decode(MetricsRequest, body));
          else return res.writeHead(404).end();
        } catch (err) {
          res.writeHead(400, { 'content-type': 'text/plain' }).end(String(err));
          return;
        }
        // An empty ExportServiceResponse: full success.
        res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
        res.end(json ? '{}' : TraceResponse);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, host, resolve));
    return `http://${host.includes(':') ? `[${host}]` : host}:${(this.server.address() as AddressInfo).port}`;
  }

  private decode(type: protobuf.Type, body: Buffer): Any {
    return type.toObject(type.decode(body), { longs: String, bytes: Uint8Array, defaults: false }) as Any;
  }

  private takeSpans(request: Any): void {
    for (const rs of (request.resourceSpans as Any[] | undefined) ?? []) {
      const serviceName = String(attributes((rs.resource as Any | undefined)?.attributes)['service.name'] ?? '');
      for (const ss of (rs.scopeSpans as Any[] | undefined) ?? []) {
        const scope = (ss.scope as Any | undefined) ?? {};
        for (const s of (ss.spans as Any[] | undefined) ?? []) {
          this.spans.push({
            traceId: hex(s.traceId),
            spanId: hex(s.spanId),
            parentSpanId: hex(s.parentSpanId),
            name: s.name as string,
            kind: num(s.kind),
            attributes: attributes(s.attributes),
            statusCode: num((s.status as Any | undefined)?.code ?? 0),
            serviceName,
            traceState: String(s.traceState ?? ''),
            flags: num(s.flags ?? 0),
            startTimeUnixNano: String(s.startTimeUnixNano ?? ''),
            endTimeUnixNano: String(s.endTimeUnixNano ?? ''),
            scope: { name: String(scope.name ?? ''), version: String(scope.version ?? '') },
          });
        }
      }
    }
  }

  private takeMetrics(request: Any): void {
    for (const rm of (request.resourceMetrics as Any[] | undefined) ?? []) {
      for (const sm of (rm.scopeMetrics as Any[] | undefined) ?? []) {
        for (const m of (sm.metrics as Any[] | undefined) ?? []) {
          const data = (m.histogram ?? m.sum ?? m.gauge) as Any | undefined;
          const points = ((data?.dataPoints as Any[] | undefined) ?? []).map((p) => ({
            attributes: attributes(p.attributes),
            ...(p.asDouble !== undefined || p.asInt !== undefined ? { value: num(p.asDouble ?? p.asInt) } : {}),
            ...(p.count !== undefined ? { count: num(p.count), sum: num(p.sum ?? 0) } : {}),
          }));
          this.metrics.push({ name: m.name as string, unit: (m.unit as string) ?? '', points });
        }
      }
    }
  }

  /** The latest collected points of a metric (metrics are cumulative: the last export holds all). */
  latest(name: string): CollectedPoint[] {
    const found = this.metrics.filter((m) => m.name === name);
    return found.length ? found[found.length - 1].points : [];
  }

  async stop(): Promise<void> {
    this.grpcServer?.forceShutdown();
    await new Promise<void>((resolve) => {
      if (!this.server) return resolve();
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}
