// When telemetry is on and where it goes: the OTEL_* environment, telemetry.yaml and the editor's flag.
import assert from 'node:assert/strict';
import { telemetrySettings } from '../../../src/broker/telemetry/settings';

const block = (b: Record<string, unknown>) =>
  ({ enabled: true, traces: true, metrics: true, ...b }) as Parameters<typeof telemetrySettings>[1];

describe('telemetry settings', () => {
  it('is off with nothing set, and off when OTEL_SDK_DISABLED says so whatever else does', () => {
    assert.equal(telemetrySettings({}), undefined);
    assert.equal(telemetrySettings({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c' }), undefined);
    assert.equal(telemetrySettings({}, block({ enabled: false })), undefined);
  });

  it('the OTEL_* endpoint turns it on; the exporters read the endpoint themselves', () => {
    const s = telemetrySettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })!;
    assert.deepEqual(s.traces, { protocol: 'http/protobuf' });
    assert.equal(s.metrics?.intervalMs, 60_000);
    assert.equal(s.turnedOnBy, 'the OTEL_* environment');
    assert.equal(s.serviceName, 'mcp-switchboard');
  });

  it("telemetry.yaml's endpoint is used where the environment names none", () => {
    const s = telemetrySettings(
      {},
      block({ endpoint: 'http://127.0.0.1:4318/', protocol: 'http/json', metricsIntervalMs: 5000 }),
    )!;
    assert.deepEqual(s.traces, { url: 'http://127.0.0.1:4318/v1/traces', protocol: 'http/json' });
    assert.deepEqual(s.metrics, { url: 'http://127.0.0.1:4318/v1/metrics', protocol: 'http/json', intervalMs: 5000 });
    const env = telemetrySettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://other' }, block({ endpoint: 'http://x' }))!;
    assert.equal(env.traces?.url, undefined, 'the environment wins');
  });

  it('the editor flag turns on recording with nothing exported', () => {
    const s = telemetrySettings({ SWITCHBOARD_TELEMETRY: '1' })!;
    assert.equal(s.traces, undefined);
    assert.equal(s.metrics, undefined);
    assert.equal(s.turnedOnBy, 'the editor setting');
  });

  it('OTEL_TRACES_EXPORTER=none keeps spans home; grpc is a protocol of its own', () => {
    const s = telemetrySettings({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c',
      OTEL_TRACES_EXPORTER: 'none',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      OTEL_METRIC_EXPORT_INTERVAL: '1500',
    })!;
    assert.equal(s.traces, undefined);
    assert.deepEqual(s.metrics, { protocol: 'grpc', intervalMs: 1500 });
    assert.deepEqual(s.notes, []);
  });

  it("telemetry.yaml's grpc sends to the collector's address (no /v1/ path); an unknown protocol is said", () => {
    const s = telemetrySettings({}, block({ endpoint: 'http://127.0.0.1:4317/', protocol: 'grpc' }))!;
    assert.deepEqual(s.traces, { url: 'http://127.0.0.1:4317', protocol: 'grpc' });
    assert.equal(s.metrics?.url, 'http://127.0.0.1:4317');
    const odd = telemetrySettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_EXPORTER_OTLP_PROTOCOL: 'thrift' })!;
    assert.equal(odd.traces?.protocol, 'http/protobuf');
    assert.match(odd.notes.join(), /'thrift' is not one of/);
  });
});
