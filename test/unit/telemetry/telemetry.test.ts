// The SDK side in process: spans nest through async work, log lines and audit entries get the trace
// id only inside a request, the live numbers cut their window, and /metrics text is well formed.
import assert from 'node:assert/strict';
import { LiveNumbersRecorder } from '../../../src/broker/telemetry/liveNumbers';
import {
  startTelemetry,
  stopTelemetry,
  telemetry,
  traceIdEntry,
  withTraceId,
} from '../../../src/broker/telemetry/telemetry';

describe('telemetry in process', () => {
  afterEach(() => stopTelemetry());

  it('is off until started: no trace id, no entry, the line as it was', () => {
    assert.equal(telemetry(), undefined);
    assert.equal(withTraceId('a line'), 'a line');
    assert.deepEqual(traceIdEntry(), {});
  });

  it("a log line inside a request names the request's trace (after awaits: given it); outside it does not", async () => {
    const running = startTelemetry({ serviceName: 't', turnedOnBy: 'test', notes: [] });
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const meta = { traceparent: `00-${traceId}-00f067aa0ba902b7-01` };
    const lines = await running.serve({ method: 'tools/call', target: 'x', client: 'c', meta }, async (trace) => {
      const before = withTraceId('before');
      await new Promise((r) => setTimeout(r, 1));
      // No AsyncLocalStorage on the per-call path: after an await the span is passed, not found.
      return [before, withTraceId('given', trace), withTraceId('found'), traceIdEntry(trace).traceId];
    });
    assert.deepEqual(lines, [`before (trace ${traceId})`, `given (trace ${traceId})`, 'found', traceId]);
    assert.equal(withTraceId('outside'), 'outside');
    const sent = await running.serve({ method: 'tools/call', client: 'c', meta }, () =>
      running.upstream(
        { server: 's', method: 'tools/call' },
        { name: 'x', _meta: { traceparent: 'caller', other: 1 } },
        (p) => Promise.resolve(p),
      ),
    );
    const meta2 = sent._meta as Record<string, string>;
    assert.match(meta2.traceparent, new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    assert.equal((meta2 as Record<string, unknown>).other, 1, 'the rest of _meta goes on');
    assert.equal(running.serverNumbers('s')?.requests, 1);
  });

  it('/metrics text holds the duration histograms by their Prometheus names', async () => {
    const running = startTelemetry({ serviceName: 't', turnedOnBy: 'test', notes: [] });
    await running.serve({ method: 'tools/call', target: 'a"b', client: 'c' }, () =>
      running
        .upstream({ server: 's', method: 'tools/call' }, { name: 'a"b' }, () => Promise.reject(new Error('no')))
        .catch(() => ({})),
    );
    const text = await running.prometheusText();
    assert.match(text, /# TYPE mcp_server_operation_duration_seconds histogram/);
    assert.match(
      text,
      /mcp_client_operation_duration_seconds_count\{[^}]*gen_ai_tool_name="a\\"b"[^}]*error_type="Error"[^}]*\} 1/,
    );
  });
});

describe('live numbers', () => {
  it('counts requests and errors in the window, with nearest-rank p50/p95', () => {
    let now = 0;
    const live = new LiveNumbersRecorder(() => now);
    for (let ms = 1; ms <= 100; ms++) live.record('s', ms, ms % 10 === 0);
    const n = live.readServer('s')!;
    assert.deepEqual(n, { requests: 100, errors: 10, errorRate: 0.1, p50Ms: 50, p95Ms: 95 });
    now = 10 * 60_000;
    assert.equal(live.readServer('s'), undefined, 'older than the window: gone');
    assert.deepEqual(live.read().servers, {});
  });

  it('keeps a bounded number of requests per server', () => {
    const live = new LiveNumbersRecorder(() => 0);
    for (let i = 0; i < 10_000; i++) live.record('s', 1, false);
    assert.equal(live.readServer('s')!.requests, 2048);
  });
});
