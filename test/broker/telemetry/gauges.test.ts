// The broker's gauges read what server_status says of each server. They are read on their own path
// (ControlOperations.serverGauges: a metric collection no longer describes every server, which
// scanned its tools' text), so a real broker with a quarantined tool checks that both agree: the
// quarantined tools, the upstreams by state, the restarts and the pending server→client requests.
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  connect,
  facade,
  removeTempDirs,
  startBrokerProcess,
  tempDir,
  waitFor,
  writeRegistry,
  type BrokerProcess,
} from '../../helpers/broker';
import { OtlpCollector } from '../../helpers/otlpCollector';
import { rugpullServer } from '../trust/pinHelpers';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const parsePrometheus = require('parse-prometheus-text-format') as (text: string) => PromFamily[];
interface PromFamily {
  name: string;
  metrics: { labels?: Record<string, string>; value?: string }[];
}

type Json = Record<string, any>;

async function prometheus(port: number, token: string): Promise<PromFamily[]> {
  const response = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { Authorization: `Bearer ${token}` } });
  assert.equal(response.status, 200);
  return parsePrometheus(await response.text());
}

/** The value of a family's one series whose labels include `labels`. */
function gauge(families: PromFamily[], name: string, labels: Record<string, string> = {}): number | undefined {
  const series = families
    .find((f) => f.name === name)
    ?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return series?.value === undefined ? undefined : Number(series.value);
}

describe('telemetry: the broker gauges agree with server_status', function () {
  this.timeout(90_000);
  const collector = new OtlpCollector();
  let broker: BrokerProcess;
  let operator: Client;

  before(async () => {
    const endpoint = await collector.start();
    const root = tempDir('sb-otel-gauges-');
    writeRegistry(root, {
      'mcp-servers.d/notes.yaml': rugpullServer('notes', 'trust: community\n'),
      'mcp-servers.d/plain.yaml': rugpullServer('plain', 'trust: trusted\n'),
    });
    broker = await startBrokerProcess({
      root,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_METRIC_EXPORT_INTERVAL: '200' },
    });
    operator = await connect(broker.url, broker.token, 'operator');
  });

  after(async () => {
    await operator?.close();
    await broker?.stop();
    await collector.stop();
    removeTempDirs();
  });

  it('counts a quarantined tool, the running upstreams and their restarts as server_status shows them', async () => {
    const before = await facade(operator, 'server_status', { name: 'notes' });
    await facade(operator, 'approve_server', { name: 'notes', hash: before.approvalHash });
    await waitFor(
      async () => (await facade(operator, 'server_status', { name: 'notes' })).pins.status === 'pinned' || undefined,
      'notes pinned',
    );
    // Positive control: nothing is quarantined yet, and the gauge says so.
    const clean = await prometheus(broker.port, broker.token);
    assert.equal(gauge(clean, 'switchboard_tools_quarantined'), 0);

    await operator.callTool({ name: 'notes__rug_pull', arguments: { variant: 'description' } });
    const statuses = await waitFor(async () => {
      const list: Json[] = (await facade(operator, 'list_servers')).servers;
      return list.find((s) => s.name === 'notes')?.pins.quarantined.length ? list : undefined;
    }, 'read_notes quarantined');
    const families = await prometheus(broker.port, broker.token);

    const quarantined = statuses.reduce((n: number, s: Json) => n + s.pins.quarantined.length, 0);
    assert.equal(quarantined, 1, JSON.stringify(statuses.map((s: Json) => s.pins)));
    assert.equal(gauge(families, 'switchboard_tools_quarantined'), quarantined);
    const running = statuses.filter((s: Json) => s.state === 'running').length;
    assert.equal(gauge(families, 'switchboard_upstreams', { switchboard_upstream_state: 'running' }), running);
    for (const s of statuses) {
      const restarts =
        gauge(families, 'switchboard_upstream_restarts_total', { switchboard_server: s.name }) ??
        gauge(families, 'switchboard_upstream_restarts', { switchboard_server: s.name });
      assert.equal(restarts, s.restarts, s.name);
    }
    const pending = statuses.reduce((n: number, s: Json) => n + (s.pendingServerRequests ?? 0), 0);
    assert.equal(gauge(families, 'switchboard_client_requests_pending'), pending);
  });
});
