// The broker's own span recorder against the SDK's: the same input gives the same exported OTLP span
// (decoded by the loopback collector from the library exporter's real protobuf), and the export
// queue (the library's BatchSpanProcessor) keeps its bound, counts what it drops and lets the
// OTEL_BSP_* variables change its defaults.
import assert from 'node:assert/strict';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, trace, type SpanContext } from '@opentelemetry/api';
import { TraceState } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { SpanRecorder, injectTraceContext, remoteParent } from '../../../src/broker/telemetry/spanRecorder';
import { startTelemetry, stopTelemetry } from '../../../src/broker/telemetry/telemetry';
import { OtlpCollector, type CollectedSpan } from '../../helpers/otlpCollector';

const CALLER: SpanContext = {
  traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
  spanId: '00f067aa0ba902b7',
  traceFlags: TraceFlags.SAMPLED,
  isRemote: true,
  traceState: new TraceState('vendor=abc'),
};
const ATTRIBUTES = Object.freeze({ 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'echo' });

/** What must match between two recorders' spans (ids and times are each recorder's own). */
function comparable(span: CollectedSpan): Omit<CollectedSpan, 'spanId' | 'startTimeUnixNano' | 'endTimeUnixNano'> {
  const { spanId: _id, startTimeUnixNano: _s, endTimeUnixNano: _e, ...rest } = span;
  return rest;
}

describe('span recorder', function () {
  this.timeout(20_000);
  const collector = new OtlpCollector();
  let endpoint: string;
  const savedEnv = { ...process.env };

  before(async () => {
    endpoint = await collector.start();
  });
  after(() => collector.stop());
  afterEach(async () => {
    await stopTelemetry();
    for (const key of Object.keys(process.env)) if (!(key in savedEnv)) delete process.env[key];
    Object.assign(process.env, savedEnv);
    collector.spans.length = 0;
  });

  it("exports the same OTLP span as the SDK's tracer for the same input (a SERVER span and its CLIENT child)", async () => {
    const resource = resourceFromAttributes({ 'service.name': 'same-input', 'service.version': '1' });
    const exporter = () => new OTLPTraceExporter({ url: `${endpoint}/v1/traces` });
    const ours = new SpanRecorder(resource, 'mcp-switchboard', '9.9.9', new BatchSpanProcessor(exporter()), {});
    const sdk = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter())] });
    const tracer = sdk.getTracer('mcp-switchboard', '9.9.9');

    const before = BigInt(Date.now() - 1) * 1_000_000n;
    const server = ours.start('tools/call echo', SpanKind.SERVER, ATTRIBUTES, remoteParent(CALLER));
    server.setAttribute('mcp.session.id', 'session-1');
    const client = ours.start('tools/call echo', SpanKind.CLIENT, ATTRIBUTES, server);
    client.failed('tool_error');
    client.end();
    server.end();

    const callerContext = trace.setSpanContext(ROOT_CONTEXT, CALLER);
    const sdkServer = tracer.startSpan(
      'tools/call echo',
      { kind: SpanKind.SERVER, attributes: ATTRIBUTES },
      callerContext,
    );
    sdkServer.setAttribute('mcp.session.id', 'session-1');
    const sdkClient = tracer.startSpan(
      'tools/call echo',
      { kind: SpanKind.CLIENT, attributes: ATTRIBUTES },
      trace.setSpan(callerContext, sdkServer),
    );
    sdkClient.setAttribute('error.type', 'tool_error');
    sdkClient.setStatus({ code: SpanStatusCode.ERROR });
    sdkClient.end();
    sdkServer.end();

    await ours.flush();
    await sdk.forceFlush();
    const after = BigInt(Date.now() + 1) * 1_000_000n;
    const byId = (id: string) => collector.spans.find((s) => s.spanId === id)!;
    const pairs = [
      [byId(server.spanContext().spanId), byId(sdkServer.spanContext().spanId)],
      [byId(client.spanContext().spanId), byId(sdkClient.spanContext().spanId)],
    ];
    for (const [mine, theirs] of pairs) {
      assert.ok(mine && theirs, 'both exported');
      // Parent ids differ by design only below the caller: compare each to its own parent.
      const mineParent = mine.kind === 3 ? server.spanContext().spanId : CALLER.spanId;
      const theirParent = theirs.kind === 3 ? sdkServer.spanContext().spanId : CALLER.spanId;
      assert.equal(mine.parentSpanId, mineParent);
      assert.equal(theirs.parentSpanId, theirParent);
      assert.deepEqual(
        { ...comparable(mine), parentSpanId: '' },
        { ...comparable(theirs), parentSpanId: '' },
        'every other field the same',
      );
      for (const t of [mine.startTimeUnixNano, mine.endTimeUnixNano]) {
        assert.ok(BigInt(t) >= before && BigInt(t) <= after, `a wall-clock time (${t})`);
      }
      assert.ok(BigInt(mine.endTimeUnixNano) >= BigInt(mine.startTimeUnixNano));
      assert.match(mine.spanId, /^[0-9a-f]{16}$/);
    }
    // What the pair shares, spelled out (so that the comparison above cannot pass on two empty spans).
    const [mineServer] = pairs[0]!;
    assert.equal(mineServer!.traceId, CALLER.traceId);
    assert.equal(mineServer!.traceState, 'vendor=abc');
    assert.equal(mineServer!.attributes['mcp.session.id'], 'session-1');
    assert.deepEqual(mineServer!.scope, { name: 'mcp-switchboard', version: '9.9.9' });
    assert.equal(pairs[1]![0]!.statusCode, 2);
    assert.equal(pairs[1]![0]!.attributes['error.type'], 'tool_error');
    await ours.shutdown();
    await sdk.shutdown();
  });

  it('gives a root span a fresh trace and passes the W3C traceparent on as the propagator writes it', () => {
    const ours = new SpanRecorder(resourceFromAttributes({}), 's', '1', undefined, {});
    const a = ours.start('a', SpanKind.SERVER, {}, undefined).spanContext();
    const b = ours.start('b', SpanKind.SERVER, {}, undefined).spanContext();
    assert.match(a.traceId, /^[0-9a-f]{32}$/);
    assert.notEqual(a.traceId, b.traceId);
    const meta: Record<string, unknown> = {};
    injectTraceContext(ours.start('c', SpanKind.CLIENT, {}, remoteParent(CALLER)).spanContext(), meta);
    assert.match(String(meta.traceparent), new RegExp(`^00-${CALLER.traceId}-[0-9a-f]{16}-01$`));
    assert.equal(meta.tracestate, 'vendor=abc');
    const unsampled = ours.start('d', SpanKind.SERVER, {}, remoteParent({ ...CALLER, traceFlags: TraceFlags.NONE }));
    injectTraceContext(unsampled.spanContext(), meta);
    assert.match(String(meta.traceparent), /-00$/, "a caller's unsampled trace stays unsampled");
  });

  async function queueRun(env: Record<string, string>, calls: number): Promise<{ dropped: number; exported: number }> {
    for (const key of Object.keys(process.env)) if (key.startsWith('OTEL_BSP_')) delete process.env[key];
    Object.assign(process.env, { OTEL_BSP_SCHEDULE_DELAY: '60000' }, env);
    const running = startTelemetry({
      serviceName: 'queue',
      traces: { url: `${endpoint}/v1/traces`, protocol: 'http/protobuf' },
      turnedOnBy: 'test',
      notes: [],
    });
    for (let i = 0; i < calls; i++) running.serve({ method: 'tools/list', client: 'c' }, () => []);
    const text = await running.prometheusText();
    const line = text
      .split('\n')
      .find((l) => l.startsWith('otel_sdk_processor_span_processed') && /queue_full/.test(l));
    await stopTelemetry(); // flushes what is queued
    return {
      dropped: line ? Number(line.trim().split(/\s+/).pop()) : 0,
      exported: collector.spans.filter((s) => s.serviceName === 'queue').length,
    };
  }

  it('keeps the queue bounded, dropping and counting past it; OTEL_BSP_MAX_QUEUE_SIZE wins over 2048', async () => {
    // A full queue goes out as one batch at once (one export in flight at a time): spans 1-4 are
    // exported while 5-8 wait in the queue, 9 and 10 find it full.
    const small = await queueRun({ OTEL_BSP_MAX_QUEUE_SIZE: '4' }, 10);
    assert.deepEqual(small, { dropped: 2, exported: 8 });
    collector.spans.length = 0;
    // Positive control: the default queue (2048) holds them all, nothing dropped.
    const defaults = await queueRun({}, 10);
    assert.deepEqual(defaults, { dropped: 0, exported: 10 });
  });

  it('exports a full batch at once, without waiting for the schedule; OTEL_BSP_MAX_EXPORT_BATCH_SIZE sets it', async () => {
    Object.assign(process.env, { OTEL_BSP_SCHEDULE_DELAY: '60000', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '3' });
    const running = startTelemetry({
      serviceName: 'batch',
      traces: { url: `${endpoint}/v1/traces`, protocol: 'http/protobuf' },
      turnedOnBy: 'test',
      notes: [],
    });
    for (let i = 0; i < 3; i++) running.serve({ method: 'tools/list', client: 'c' }, () => []);
    const deadline = Date.now() + 10_000;
    while (collector.spans.filter((s) => s.serviceName === 'batch').length < 3 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    assert.equal(collector.spans.filter((s) => s.serviceName === 'batch').length, 3, 'a batch of 3 went at once');
  });
});
