// The editor's switchboard.telemetry.enabled applied while the broker runs (the operator-only
// control operation set_editor_telemetry, as the extension calls it): a real broker started with
// telemetry off starts it (spans reach the collector telemetry.yaml names, /metrics answers, the
// SERVER span layer is on) and stops it again; the OTEL_* environment keeps it on whatever the
// editor says; an agent cannot switch it.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  connect,
  facade,
  fixtureServer,
  removeTempDirs,
  startBrokerProcess,
  status,
  tempDir,
  waitFor,
  writeRegistry,
  type BrokerProcess,
} from '../../helpers/broker';
import { OtlpCollector } from '../../helpers/otlpCollector';
import { exportedTrace, startTelemetryBroker, stopTelemetryBroker } from '../../helpers/telemetryBroker';

const hexId = (bytes: number): string => randomBytes(bytes).toString('hex');

function metricsStatus(port: number, token: string): Promise<number> {
  return fetch(`http://127.0.0.1:${port}/metrics`, { headers: { Authorization: `Bearer ${token}` } }).then(
    async (r) => (await r.text(), r.status),
  );
}

describe("telemetry: the editor's setting applies without restarting the broker", function () {
  this.timeout(90_000);
  const collector = new OtlpCollector();
  let broker: BrokerProcess;
  let operator: Client;
  let agentToken: string;

  before(async () => {
    ({ broker, operator, agentToken } = await startTelemetryBroker(collector, {
      prefix: 'sb-otel-live-',
      files: (endpoint) => ({
        'mcp-servers.d/classic.yaml': fixtureServer('classic', 'traceparent.mjs'),
        // Off until the editor says otherwise; where spans go once it is on.
        'telemetry.yaml': `telemetry:\n  enabled: false\n  endpoint: ${endpoint}\n`,
        'clients.d/agent.yaml': 'name: agent\nmcp_allow: [read, write]\n',
      }),
      // No OTEL_* environment turning it on: the editor's setting decides.
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_SDK_DISABLED: '' },
      running: ['classic'],
    }));
  });

  after(() => stopTelemetryBroker(collector, broker, [operator]));

  async function tracedCall(): Promise<string> {
    const traceId = hexId(16);
    await operator.callTool({
      name: 'classic__trace',
      arguments: { text: 'x' },
      _meta: { traceparent: `00-${traceId}-${hexId(8)}-01` },
    });
    return traceId;
  }

  it('an agent cannot switch telemetry', async () => {
    const agent = await connect(broker.url, agentToken, 'agent');
    try {
      await assert.rejects(
        agent.callTool({ name: 'switchboard__set_editor_telemetry', arguments: { enabled: true } }),
        /for the operator only/,
      );
      assert.equal(await metricsStatus(broker.port, broker.token), 404, 'still off');
    } finally {
      await agent.close();
    }
  });

  it('on: spans reach the collector and /metrics answers, in the same broker process', async () => {
    const pid = broker.proc.pid;
    await tracedCall();
    assert.equal(await metricsStatus(broker.port, broker.token), 404, 'off before');
    const on = await facade(operator, 'set_editor_telemetry', { enabled: true });
    assert.deepEqual(on, { telemetry: true, changed: true });
    const traceId = await tracedCall();
    const spans = await exportedTrace(collector, traceId, 2, "the call's SERVER and CLIENT spans");
    assert.deepEqual(spans.map((s) => s.kind).sort(), [2, 3]);
    assert.equal(await metricsStatus(broker.port, broker.token), 200);
    assert.ok((await status(operator, 'classic')).live, "the server's live numbers are in its status");
    assert.equal(broker.proc.pid, pid);
    assert.ok(broker.stderr.some((l) => l.includes('telemetry on (turned on by the editor setting)')));
    assert.deepEqual(await facade(operator, 'set_editor_telemetry', { enabled: true }), {
      telemetry: true,
      changed: false,
    });
  });

  it('off again: nothing more is exported, /metrics says it is off', async () => {
    assert.deepEqual(await facade(operator, 'set_editor_telemetry', { enabled: false }), {
      telemetry: false,
      changed: true,
    });
    assert.equal(await metricsStatus(broker.port, broker.token), 404);
    const traceId = await tracedCall();
    // The call after it ends in a trace of its own while on: a later export would have carried it.
    await facade(operator, 'set_editor_telemetry', { enabled: true });
    const marker = await tracedCall();
    await waitFor(() => collector.spans.some((s) => s.traceId === marker), 'the marker call exported', 20_000);
    assert.ok(!collector.spans.some((s) => s.traceId === traceId), 'a call made while off was exported');
    await facade(operator, 'set_editor_telemetry', { enabled: false });
  });
});

describe('telemetry: the OTEL_* environment keeps it on whatever the editor says', function () {
  this.timeout(60_000);
  const collector = new OtlpCollector();
  let broker: BrokerProcess;

  before(async () => {
    const endpoint = await collector.start();
    const root = tempDir('sb-otel-live-env-');
    writeRegistry(root, { 'mcp-servers.d/classic.yaml': fixtureServer('classic', 'traceparent.mjs') });
    broker = await startBrokerProcess({ root, env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint } });
  });

  after(async () => {
    await broker?.stop();
    await collector.stop();
    removeTempDirs();
  });

  it('the editor turning it off is answered with why it stays on', async () => {
    const operator = await connect(broker.url, broker.token, 'operator');
    try {
      const answer = await facade(operator, 'set_editor_telemetry', { enabled: false });
      assert.equal(answer.telemetry, true);
      assert.equal(answer.changed, false);
      assert.match(answer.note, /stays on: the OTEL_\* environment turns it on/);
      assert.equal(await metricsStatus(broker.port, broker.token), 200);
    } finally {
      await operator.close();
    }
  });
});
