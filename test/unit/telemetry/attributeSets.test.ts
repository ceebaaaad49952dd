// What telemetry's per-call savings must keep: one frozen attribute set per kind of request (never
// a session id or a resource URI in it), the SDK's attribute hash kept per frozen set and computed
// afresh for any other, and /metrics cumulative whether the OTLP exporter serves it (cumulative, one
// reader) or a reader of its own does (a delta exporter).
import assert from 'node:assert/strict';
import { memoizedHash, installAttributeHash } from '../../../src/broker/telemetry/attributeHash';
import { AttributeSets, metricAttributes } from '../../../src/broker/telemetry/attributeSets';
import { startTelemetry, stopTelemetry } from '../../../src/broker/telemetry/telemetry';

describe('telemetry attribute sets', () => {
  it('gives every call of one kind the same frozen set, named as the conventions say', () => {
    const sets = new AttributeSets();
    const a = sets.served('tools/call', 'echo__echo', 'agent', undefined);
    assert.equal(sets.served('tools/call', 'echo__echo', 'agent', undefined), a);
    assert.ok(Object.isFrozen(a.attributes));
    assert.equal(a.name, 'tools/call echo__echo');
    assert.deepEqual(a.attributes, {
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'echo__echo',
      'gen_ai.operation.name': 'execute_tool',
      'switchboard.client': 'agent',
    });
    assert.notEqual(sets.served('tools/call', 'echo__echo', 'other', undefined), a, 'another client, another set');
    assert.equal(sets.served('tools/call', 'echo__echo', 'agent', 'echo').attributes['switchboard.server'], 'echo');
  });

  it('keeps resource URIs out of the name and the set: one set for every resource read', () => {
    const sets = new AttributeSets();
    const one = sets.upstream('resources/read', 'file:///a', 'fs', '2025-06-18', 'trusted');
    assert.equal(sets.upstream('resources/read', 'file:///b', 'fs', '2025-06-18', 'trusted'), one);
    assert.equal(one.name, 'resources/read');
    assert.equal(one.attributes['mcp.resource.uri'], undefined);
    assert.equal(one.attributes['mcp.protocol.version'], '2025-06-18');
    assert.equal(one.attributes['switchboard.trust'], 'trusted');
  });

  it('stays bounded: many kinds of request start the cache over, each set still right', () => {
    const sets = new AttributeSets();
    for (let i = 0; i < 3000; i++) {
      const set = sets.served('tools/call', `tool${i}`, 'agent', undefined);
      assert.equal(set.attributes['gen_ai.tool.name'], `tool${i}`);
    }
    assert.ok(sets.size <= 1024, `kept ${sets.size} sets`);
  });

  it("a failure's metric attributes add error.type, one frozen object per type", () => {
    const set = new AttributeSets().served('prompts/get', 'p', 'agent', undefined);
    assert.equal(metricAttributes(set, undefined), set.attributes);
    const failed = metricAttributes(set, '-32602');
    assert.equal(failed['error.type'], '-32602');
    assert.equal(failed['gen_ai.prompt.name'], 'p');
    assert.equal(metricAttributes(set, '-32602'), failed);
    assert.ok(Object.isFrozen(failed));
  });
});

describe('telemetry attribute hash', () => {
  it('hashes a frozen set once, any other set on every call', () => {
    let calls = 0;
    const hash = memoizedHash((attributes) => {
      calls++;
      return JSON.stringify(Object.entries(attributes).sort());
    });
    const frozen = Object.freeze({ b: '2', a: '1' });
    assert.equal(hash(frozen), hash(frozen));
    assert.equal(calls, 1);
    const open: Record<string, string> = { a: '1' };
    const before = hash(open);
    open.a = '2';
    assert.notEqual(hash(open), before, 'a set that changed is hashed again');
    assert.equal(calls, 3);
  });

  it('is put into the installed metrics SDK (a new SDK version that moved it fails here)', () => {
    assert.equal(installAttributeHash(), true);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const utils = require('@opentelemetry/sdk-metrics/build/src/utils') as { hashAttributes: (a: object) => string };
    assert.equal(utils.hashAttributes(Object.freeze({ b: 1, a: 2 })), '[["a",2],["b",1]]');
  });
});

describe('telemetry /metrics beside an OTLP metric exporter', () => {
  const saved = process.env.OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE;
  afterEach(async () => {
    await stopTelemetry();
    if (saved === undefined) delete process.env.OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE;
    else process.env.OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE = saved;
  });

  for (const temporality of ['cumulative', 'delta']) {
    it(`counts every call since the start on each read (exporter ${temporality})`, async () => {
      process.env.OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE = temporality;
      // Nothing listens there, and the first export is a minute away: /metrics is all that is read.
      const running = startTelemetry({
        serviceName: 't',
        turnedOnBy: 'test',
        notes: [],
        metrics: { url: 'http://127.0.0.1:9/v1/metrics', protocol: 'http/protobuf', intervalMs: 60_000 },
      });
      const call = () =>
        running.serve({ method: 'tools/call', target: 'x', client: 'c', sessionId: 's1' }, () =>
          running.upstream({ server: 's', method: 'tools/call' }, { name: 'x' }, () => Promise.resolve({})),
        );
      const count = (text: string) =>
        Number(/mcp_server_operation_duration_seconds_count\{[^}]*\} (\d+)/.exec(text)?.[1] ?? 'NaN');
      await call();
      assert.equal(count(await running.prometheusText()), 1);
      await call();
      await call();
      const text = await running.prometheusText();
      assert.equal(count(text), 3);
      assert.doesNotMatch(text, /mcp_session_id/, 'a session id is never a metric label');
    });
  }
});
