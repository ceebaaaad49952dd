// OpenTelemetry end to end: a real broker exporting over OTLP/HTTP to a loopback collector
// (test/helpers/otlpCollector.ts), real SDK clients of both eras on both endpoints, and upstreams of
// both eras (test/fixtures/traceparent.mjs) that say which traceparent reached them. One trace runs
// from the caller's _meta through the broker's SERVER and CLIENT spans into the server; metrics
// arrive by OTLP and on GET /metrics; no argument, _meta value or token is ever exported.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  connect,
  facade,
  fixtureServer,
  removeTempDirs,
  startBrokerProcess,
  status,
  tempDir,
  textOf,
  waitFor,
  writeRegistry,
  type BrokerProcess,
} from '../../helpers/broker';
import { OtlpCollector, type CollectedSpan } from '../../helpers/otlpCollector';
import { exportedTrace, startTelemetryBroker, stopTelemetryBroker } from '../../helpers/telemetryBroker';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const parsePrometheus = require('parse-prometheus-text-format') as (text: string) => PromFamily[];
interface PromFamily {
  name: string;
  type: string;
  metrics: { labels?: Record<string, string>; value?: string; count?: string; buckets?: Record<string, string> }[];
}

const ARGUMENT_CANARY = 'canary-otel-argument-7f3e1d';
const META_CANARY = 'canary-otel-meta-92ab44';
const SERVER = 2;
const CLIENT = 3;

const hexId = (bytes: number): string => randomBytes(bytes).toString('hex');

interface Caller {
  era: '2025-11-25' | '2026-07-28';
  call(name: string, args: Record<string, unknown>, meta: Record<string, unknown>): Promise<unknown>;
  close(): Promise<void>;
}

async function callerOf(era: Caller['era'], url: string, token: string): Promise<Caller> {
  if (era === '2025-11-25') {
    const client: Client = await connect(url, token, 'traced-agent');
    return {
      era,
      call: (name, args, _meta) => client.callTool({ name, arguments: args, _meta }),
      close: () => client.close(),
    };
  }
  const client = new ClientV2(
    { name: 'traced-agent', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities: {} },
  );
  await client.connect(
    new TransportV2(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
  );
  return {
    era,
    call: (name, args, _meta) => client.callTool({ name, arguments: args, _meta }),
    close: () => client.close(),
  };
}

function metricsText(port: number, token?: string): Promise<{ status: number; body: string }> {
  return fetch(`http://127.0.0.1:${port}/metrics`, {
    headers: token ? { Authorization: `Bearer ${token}` } : {},
  }).then(async (r) => ({ status: r.status, body: await r.text() }));
}

describe('telemetry: traces and metrics of real calls (OTLP/HTTP)', function () {
  this.timeout(120_000);
  const collector = new OtlpCollector();
  let broker: BrokerProcess;
  let operator: Client;
  let agentToken: string;

  before(async () => {
    ({ broker, operator, agentToken } = await startTelemetryBroker(collector, {
      prefix: 'sb-otel-',
      files: () => ({
        'mcp-servers.d/classic.yaml': fixtureServer('classic', 'traceparent.mjs'),
        'mcp-servers.d/modern.yaml': fixtureServer('modern', 'traceparent.mjs', ['--modern']),
        'mcp-servers.d/sleepy.yaml': fixtureServer('sleepy', 'traceparent.mjs', [], 'lifecycle: lazy\n'),
        'clients.d/agent.yaml': 'name: agent\nmcp_allow: [read, write]\n',
      }),
      env: { OTEL_METRIC_EXPORT_INTERVAL: '200' },
      running: ['modern', 'classic'],
    }));
  });

  after(() => stopTelemetryBroker(collector, broker, [operator]));

  function spanById(id: string): Promise<CollectedSpan> {
    return waitFor(() => collector.spans.find((s) => s.spanId === id), `span ${id} exported`, 20_000);
  }

  const endpoints = [
    { label: '/mcp', path: '/mcp', tool: (server: string) => `${server}__trace` },
    { label: '/servers/<name>/mcp', path: '/servers/{s}/mcp', tool: () => 'trace' },
  ];
  const eras: Caller['era'][] = ['2025-11-25', '2026-07-28'];
  const upstreams = [
    { server: 'classic', protocol: '2025-11-25' },
    { server: 'modern', protocol: '2026-07-28' },
  ];

  for (const ep of endpoints) {
    for (const era of eras) {
      for (const up of upstreams) {
        it(`one trace from a ${era} caller on ${ep.label} into a ${up.protocol} server (${up.server})`, async () => {
          const url = `http://127.0.0.1:${broker.port}${ep.path.replace('{s}', up.server)}`;
          const caller = await callerOf(era, url, agentToken);
          const traceId = hexId(16);
          const callerSpan = hexId(8);
          const tool = ep.tool(up.server);
          try {
            const result = await caller.call(
              tool,
              { text: ARGUMENT_CANARY },
              { traceparent: `00-${traceId}-${callerSpan}-01`, tracestate: 'vendor=x', note: META_CANARY },
            );
            const received = JSON.parse(textOf(result)) as { traceparent: string; text: string };
            // The argument did reach the server (the canary search below is not vacuous).
            assert.equal(received.text, ARGUMENT_CANARY);
            const [, gotTrace, gotSpan, flags] = received.traceparent.split('-');
            assert.equal(gotTrace, traceId, 'the server is in the caller trace');
            assert.notEqual(gotSpan, callerSpan, "the server's parent is the broker's CLIENT span, not the caller's");
            assert.equal(flags, '01');

            const clientSpan = await spanById(gotSpan);
            assert.equal(clientSpan.kind, CLIENT);
            assert.equal(clientSpan.traceId, traceId);
            assert.equal(clientSpan.name, 'tools/call trace');
            assert.equal(clientSpan.attributes['mcp.method.name'], 'tools/call');
            assert.equal(clientSpan.attributes['gen_ai.tool.name'], 'trace');
            assert.equal(clientSpan.attributes['switchboard.server'], up.server);
            assert.equal(clientSpan.attributes['switchboard.trust'], 'trusted');
            assert.equal(clientSpan.attributes['mcp.protocol.version'], up.protocol);
            assert.equal(clientSpan.serviceName, 'mcp-switchboard');

            const serverSpan = await spanById(clientSpan.parentSpanId);
            assert.equal(serverSpan.kind, SERVER);
            assert.equal(serverSpan.traceId, traceId);
            assert.equal(serverSpan.parentSpanId, callerSpan, "the SERVER span's parent is the caller's span");
            assert.equal(serverSpan.name, `tools/call ${tool}`);
            assert.equal(serverSpan.attributes['gen_ai.tool.name'], tool);
            assert.equal(serverSpan.attributes['switchboard.client'], 'agent');
            if (ep.path !== '/mcp') assert.equal(serverSpan.attributes['switchboard.server'], up.server);
            if (era === '2025-11-25') assert.equal(typeof serverSpan.attributes['mcp.session.id'], 'string');
          } finally {
            await caller.close();
          }
        });
      }
    }
  }

  it('lists are SERVER spans too; a tool error is error.type tool_error on both spans', async () => {
    const caller = await callerOf('2025-11-25', broker.url, agentToken);
    try {
      const traceId = hexId(16);
      const result = (await caller.call('classic__oops', {}, { traceparent: `00-${traceId}-${hexId(8)}-01` })) as {
        isError?: boolean;
      };
      assert.equal(result.isError, true);
      const spans = await exportedTrace(collector, traceId, 2, 'the SERVER and CLIENT spans of the failed call');
      for (const span of spans) {
        assert.equal(span.attributes['error.type'], 'tool_error', span.name);
        assert.equal(span.statusCode, 2, `${span.name} has status ERROR`);
      }
      const lister = await connect(broker.url, agentToken, 'traced-agent');
      await lister.listTools();
      await lister.close();
      await waitFor(
        () => collector.spans.find((s) => s.kind === SERVER && s.name === 'tools/list'),
        'a tools/list SERVER span',
        20_000,
      );
    } finally {
      await caller.close();
    }
  });

  it('a prompts/get is traced from its _meta too', async () => {
    const client = await connect(broker.url, agentToken, 'traced-agent');
    try {
      const traceId = hexId(16);
      const callerSpan = hexId(8);
      await client.getPrompt({ name: 'classic__hello', _meta: { traceparent: `00-${traceId}-${callerSpan}-01` } });
      const spans = await exportedTrace(collector, traceId, 2, 'the prompts/get spans');
      const server = spans.find((s) => s.kind === SERVER)!;
      assert.equal(server.name, 'prompts/get classic__hello');
      assert.equal(server.parentSpanId, callerSpan);
      assert.equal(server.attributes['gen_ai.prompt.name'], 'classic__hello');
      assert.equal(spans.find((s) => s.kind === CLIENT)!.parentSpanId, server.spanId);
    } finally {
      await client.close();
    }
  });

  it('exports the MCP duration histograms and the broker gauges over OTLP', async () => {
    const clientPoint = await waitFor(
      () =>
        collector
          .latest('mcp.client.operation.duration')
          .find(
            (p) =>
              p.attributes['switchboard.server'] === 'modern' &&
              p.attributes['gen_ai.tool.name'] === 'trace' &&
              (p.count ?? 0) >= 4,
          ),
      'the client duration histogram of the modern server',
      20_000,
    );
    assert.equal(clientPoint.attributes['mcp.method.name'], 'tools/call');
    assert.equal(clientPoint.attributes['mcp.protocol.version'], '2026-07-28');
    assert.ok(collector.metrics.find((m) => m.name === 'mcp.client.operation.duration')!.unit === 's');
    const served = collector.latest('mcp.server.operation.duration');
    assert.ok(
      served.some(
        (p) => p.attributes['gen_ai.tool.name'] === 'trace' && p.attributes['switchboard.client'] === 'agent',
      ),
      JSON.stringify(served),
    );
    assert.ok(
      served.every((p) => !('mcp.session.id' in p.attributes)),
      'no per-session metric series',
    );
    const upstreams = collector.latest('switchboard.upstreams');
    assert.equal(upstreams.find((p) => p.attributes['switchboard.upstream.state'] === 'running')?.value, 2);
    assert.ok(collector.latest('switchboard.sessions').length === 1);
    assert.ok(collector.contentTypes.has('application/x-protobuf'), [...collector.contentTypes].join());
  });

  it('serves Prometheus text on GET /metrics to the operator alone', async () => {
    assert.equal((await metricsText(broker.port)).status, 401);
    const agent = await metricsText(broker.port, agentToken);
    assert.equal(agent.status, 403);
    assert.match(agent.body, /operator/);
    const { status: code, body } = await metricsText(broker.port, broker.token);
    assert.equal(code, 200);
    // The parser reads every line (a malformed one throws) and each family's type; it folds a
    // labelled histogram's series into one, so the per-series counts are read from the text.
    const families = parsePrometheus(body);
    const client = families.find((f) => f.name === 'mcp_client_operation_duration_seconds');
    assert.ok(client, families.map((f) => f.name).join(', '));
    assert.equal(client.type, 'HISTOGRAM');
    assert.equal(families.find((f) => f.name === 'mcp_server_operation_duration_seconds')?.type, 'HISTOGRAM');
    const series = (suffix: string) =>
      body
        .split('\n')
        .filter(
          (l) =>
            l.startsWith(`mcp_client_operation_duration_seconds_${suffix}{`) &&
            l.includes('switchboard_server="classic"') &&
            l.includes('gen_ai_tool_name="trace"'),
        );
    const count = Number(series('count')[0]?.split(' ').pop());
    assert.ok(count >= 4, series('count').join('\n'));
    const infinity = series('bucket').find((l) => l.includes('le="+Inf"'));
    assert.equal(Number(infinity?.split(' ').pop()), count, 'the +Inf bucket holds every request');
    const upstreams = families.find((f) => f.name === 'switchboard_upstreams');
    assert.equal(upstreams?.metrics.find((m) => m.labels?.switchboard_upstream_state === 'running')?.value, '2');
  });

  it('a call that wakes a lazy server waits in a span of its own, inside the call', async () => {
    // Its learning run (started with the broker) is over: the call below is what wakes it.
    await waitFor(async () => (await status(operator, 'sleepy')).state === 'idle', 'sleepy idle', 30_000);
    const client = await connect(broker.url, agentToken, 'traced-agent');
    const traceId = hexId(16);
    await client.callTool({
      name: 'sleepy__trace',
      arguments: { text: 'x' },
      _meta: { traceparent: `00-${traceId}-${hexId(8)}-01` },
    });
    await client.close();
    const spans = await exportedTrace(collector, traceId, 4, 'the SERVER, start, launch and CLIENT spans');
    const server = spans.find((s) => s.kind === SERVER)!;
    const start = spans.find((s) => s.name === 'start sleepy');
    assert.ok(start, spans.map((s) => s.name).join(', '));
    assert.equal(start.kind, 1, 'INTERNAL');
    assert.equal(start.parentSpanId, server.spanId);
    assert.equal(spans.find((s) => s.kind === CLIENT)!.parentSpanId, server.spanId);
  });

  it('names the trace in the audit entry of a call, and times a session that ended', async () => {
    const client = await connect(broker.url, agentToken, 'traced-agent');
    const traceId = hexId(16);
    await client.callTool({
      name: 'classic__trace',
      arguments: { text: 'x' },
      _meta: { traceparent: `00-${traceId}-${hexId(8)}-01` },
    });
    await (client.transport as StreamableHTTPClientTransport).terminateSession();
    await client.close();
    const { entries } = (await facade(operator, 'read_audit', { limit: 20 })) as { entries: Record<string, unknown>[] };
    const entry = entries.find((e) => e.event === 'call' && e.traceId === traceId);
    assert.ok(entry, JSON.stringify(entries.slice(0, 3)));
    assert.equal(entry.tool, 'trace');
    const sessions = await waitFor(
      () => collector.latest('mcp.server.session.duration').find((p) => p.attributes['switchboard.client'] === 'agent'),
      'a session duration',
      20_000,
    );
    assert.ok((sessions.count ?? 0) >= 1);
  });

  it("shows each server's requests, error rate and p50/p95 in its status", async () => {
    const classic = (await status(operator, 'classic')).live as Record<string, number>;
    assert.ok(classic.requests >= 5, JSON.stringify(classic));
    assert.ok(classic.errors >= 1 && classic.errorRate > 0 && classic.errorRate < 1, JSON.stringify(classic));
    assert.ok(classic.p95Ms >= classic.p50Ms && classic.p50Ms > 0);
  });

  it('never exports an argument, a _meta value or a token (canary search of every body received)', async () => {
    // Everything ended is exported: the last call's spans arrived before this search.
    const caller = await callerOf('2025-11-25', broker.url, agentToken);
    const traceId = hexId(16);
    await caller.call('modern__trace', { text: ARGUMENT_CANARY }, { traceparent: `00-${traceId}-${hexId(8)}-01` });
    await caller.close();
    await waitFor(() => collector.spans.filter((s) => s.traceId === traceId).length === 2, 'the last spans', 20_000);
    const bodies = collector.rawBodies.map((b) => b.toString('latin1'));
    // Positive control: the search finds what is exported (names, attributes, the trace id's bytes).
    assert.ok(bodies.some((b) => b.includes('gen_ai.tool.name')));
    assert.ok(bodies.some((b) => b.includes(Buffer.from(traceId, 'hex').toString('latin1'))));
    for (const canary of [ARGUMENT_CANARY, META_CANARY, broker.token, agentToken]) {
      assert.ok(!bodies.some((b) => b.includes(canary)), `exported telemetry holds ${canary.slice(0, 12)}…`);
    }
    const prometheus = (await metricsText(broker.port, broker.token)).body;
    for (const canary of [ARGUMENT_CANARY, META_CANARY, broker.token, agentToken])
      assert.ok(!prometheus.includes(canary));
  });
});

describe('telemetry off (the default)', function () {
  this.timeout(60_000);
  let broker: BrokerProcess;

  before(async () => {
    const root = tempDir('sb-otel-off-');
    writeRegistry(root, { 'mcp-servers.d/classic.yaml': fixtureServer('classic', 'traceparent.mjs') });
    broker = await startBrokerProcess({ root, env: { OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_SDK_DISABLED: '' } });
  });

  after(async () => {
    await broker?.stop();
    removeTempDirs();
  });

  it("passes the caller's trace context through untouched, serves no /metrics and adds nothing to status", async () => {
    const operator = await connect(broker.url, broker.token, 'operator');
    try {
      await waitFor(async () => (await status(operator, 'classic')).state === 'running', 'classic running', 30_000);
      const traceparent = `00-${hexId(16)}-${hexId(8)}-01`;
      const result = await operator.callTool({
        name: 'classic__trace',
        arguments: { text: 'x' },
        _meta: { traceparent, tracestate: 'vendor=x' },
      });
      assert.deepEqual(JSON.parse(textOf(result)), { traceparent, tracestate: 'vendor=x', text: 'x' });
      const metrics = await metricsText(broker.port, broker.token);
      assert.equal(metrics.status, 404);
      assert.match(metrics.body, /Telemetry is off/);
      assert.equal((await status(operator, 'classic')).live, undefined);
      assert.ok(!broker.stderr.some((l) => l.includes('telemetry on')));
    } finally {
      await operator.close();
    }
  });
});
