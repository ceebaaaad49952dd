// OTEL_TRACES_SAMPLER through a real broker exporting to the loopback OTLP collector: a span the
// sampler leaves out is not exported, yet its trace context still reaches the upstream (flags 00, as
// W3C trace context asks), and a parent-based sampler follows the caller's sampled flag. Each
// broker's positive control shows that its exporter is alive, so "nothing exported" is not vacuous.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connect, fixtureServer, textOf, waitFor, type BrokerProcess } from '../../helpers/broker';
import { OtlpCollector } from '../../helpers/otlpCollector';
import { exportedTrace, startTelemetryBroker, stopTelemetryBroker } from '../../helpers/telemetryBroker';

const hexId = (bytes: number): string => randomBytes(bytes).toString('hex');

/** Calls the traceparent fixture's tool; the traceparent the upstream received, split into its parts. */
async function callTraced(
  agent: Client,
  meta: Record<string, unknown>,
): Promise<{ traceId: string; parentId: string; flags: string }> {
  const result = await agent.callTool({ name: 'classic__trace', arguments: { text: 'x' }, _meta: meta });
  const received = JSON.parse(textOf(result)) as { traceparent?: string };
  assert.ok(received.traceparent, `the upstream received a traceparent: ${JSON.stringify(received)}`);
  const [, traceId, parentId, flags] = received.traceparent.split('-');
  return { traceId, parentId, flags };
}

/**
 * A broker sampling as `env` says, exporting to its own collector, with the agent connected: started
 * before the describe's tests and stopped after them.
 */
function samplingBroker(env: NodeJS.ProcessEnv): { collector: OtlpCollector; agent: () => Client } {
  const collector = new OtlpCollector();
  let broker: BrokerProcess | undefined;
  let operator: Client | undefined;
  let agent: Client | undefined;
  before(async () => {
    let agentToken: string;
    ({ broker, operator, agentToken } = await startTelemetryBroker(collector, {
      prefix: 'sb-otel-sampling-',
      files: () => ({
        'mcp-servers.d/classic.yaml': fixtureServer('classic', 'traceparent.mjs'),
        'clients.d/agent.yaml': 'name: agent\nmcp_allow: [read, write]\n',
      }),
      env,
      running: ['classic'],
    }));
    agent = await connect(`http://127.0.0.1:${broker.port}/mcp`, agentToken, 'agent');
  });
  after(() => stopTelemetryBroker(collector, broker, [agent, operator]));
  return { collector, agent: () => agent! };
}

describe('telemetry: OTEL_TRACES_SAMPLER', function () {
  this.timeout(90_000);

  describe('parentbased_traceidratio at 0', () => {
    const { collector, agent } = samplingBroker({
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0',
    });

    it('leaves out root spans and unsampled parents, follows a sampled parent, and always propagates', async () => {
      // A call with no trace context: a root span, left out by the ratio of 0; the upstream still hears it.
      const root = await callTraced(agent(), {});
      assert.equal(root.flags, '00');
      assert.match(root.traceId, /^[0-9a-f]{32}$/);
      // A caller whose own span was not sampled: the broker's spans follow it.
      const unsampledTrace = hexId(16);
      const unsampled = await callTraced(agent(), { traceparent: `00-${unsampledTrace}-${hexId(8)}-00` });
      assert.equal(unsampled.traceId, unsampledTrace);
      assert.equal(unsampled.flags, '00');
      // Control: a sampled caller's call is exported (parent-based: the ratio decides roots only).
      const sampledTrace = hexId(16);
      const sampled = await callTraced(agent(), { traceparent: `00-${sampledTrace}-${hexId(8)}-01` });
      assert.equal(sampled.flags, '01');
      const spans = await exportedTrace(collector, sampledTrace, 2, 'the sampled call: SERVER and CLIENT spans');
      assert.ok(spans.some((s) => s.spanId === sampled.parentId));
      // Exported in order, 50 ms apart: what the two earlier calls would have sent has arrived by now.
      for (const traceId of [root.traceId, unsampledTrace]) {
        assert.deepEqual(
          collector.spans.filter((s) => s.traceId === traceId),
          [],
          `no span of the left-out trace ${traceId}`,
        );
      }
    });
  });

  describe('always_off', () => {
    const { collector, agent } = samplingBroker({
      OTEL_TRACES_SAMPLER: 'always_off',
      OTEL_METRIC_EXPORT_INTERVAL: '200',
    });

    it('exports no span even under a sampled caller, passes flags 00 on, and still exports metrics', async () => {
      const traceId = hexId(16);
      const call = await callTraced(agent(), { traceparent: `00-${traceId}-${hexId(8)}-01` });
      assert.equal(call.traceId, traceId, 'the upstream is in the caller trace');
      assert.equal(call.flags, '00', 'not sampled by the broker: said so downstream');
      // Control: the exporter is alive, and the call is counted in the duration histogram.
      await waitFor(
        () =>
          collector
            .latest('mcp.client.operation.duration')
            .find((p) => p.attributes['switchboard.server'] === 'classic' && (p.count ?? 0) >= 1),
        'the call in the client duration histogram',
        20_000,
      );
      // Spans leave 50 ms after they end (OTEL_BSP_SCHEDULE_DELAY): give them six times that.
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.deepEqual(collector.spans, [], 'no span exported at all');
    });
  });
});
