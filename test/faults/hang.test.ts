// Fault: an upstream that never answers.
// Proves: each call times out after its server's callMs (not the client's 60 s default, not
// never), with a message saying so; the session that made the calls keeps working; the broker
// sends notifications/cancelled upstream for every timed-out call and for every call the client
// aborts; and a hung server does not hold up calls to another one.
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  connect,
  fixtureServer,
  removeTempDirs,
  tempDir,
  textOf,
  waitFor,
  writeRegistry,
  type BrokerProcess,
} from '../helpers/broker';
import {
  RawHttp,
  RawSession,
  faultServer,
  isJsonRpcError,
  noteUpstreams,
  report,
  rssMb,
  startBroker,
  status,
} from './lib';

const CALL_MS = 1000;
const HANGS = 30;

async function cancelledCount(client: Client, tool: string): Promise<number> {
  return ((await client.callTool({ name: tool, arguments: {} })).structuredContent as { cancelled: number }).cancelled;
}

describe('faults: upstream that never answers', function () {
  this.timeout(120_000);
  let broker: BrokerProcess;
  let client: Client;

  before(async () => {
    const root = tempDir('sb-fault-hang-');
    writeRegistry(root, {
      'mcp-servers.d/slow.yaml': fixtureServer('slow', 'slow.mjs', [], `timeouts:\n  callMs: ${CALL_MS}\n`),
      'mcp-servers.d/bare.yaml': faultServer('bare', 'bare.mjs', [], `timeouts:\n  callMs: ${CALL_MS * 2}\n`),
      'mcp-servers.d/echo.yaml': fixtureServer('echo', 'echo.mjs'),
    });
    broker = await startBroker({ root });
    client = await connect(broker.url, broker.token, 'hang');
    await waitFor(
      async () =>
        (await Promise.all(['slow', 'bare', 'echo'].map((n) => status(client, n)))).every((s) => s.state === 'running'),
      'upstreams',
      30_000,
    );
    noteUpstreams(broker);
  });

  after(async () => {
    await client?.close().catch(() => undefined);
    await broker?.stop();
    removeTempDirs();
  });

  it(`times out ${HANGS} concurrent hung calls per server timeout, cancels them upstream, keeps the session`, async () => {
    const rssStart = rssMb(broker.proc.pid!);
    const before = {
      slow: await cancelledCount(client, 'slow__cancelled'),
      bare: await cancelledCount(client, 'bare__cancelled'),
    };
    const t0 = Date.now();
    const calls = Array.from({ length: HANGS }, (_, i) => {
      const tool = i % 2 ? 'slow__hang' : 'bare__hang';
      return client.callTool({ name: tool, arguments: {} }).then(
        () => ({ tool, ms: Date.now() - t0, message: 'answered?!' }),
        (e: Error) => ({ tool, ms: Date.now() - t0, message: e.message }),
      );
    });
    // Meanwhile another upstream answers at once.
    const echoT0 = Date.now();
    assert.equal(
      textOf(await client.callTool({ name: 'echo__echo', arguments: { text: 'not blocked' } })),
      'echo: not blocked',
    );
    const echoMs = Date.now() - echoT0;
    const results = await Promise.all(calls);
    const failures: string[] = [];
    for (const r of results) {
      const limit = r.tool === 'slow__hang' ? CALL_MS : CALL_MS * 2;
      if (!new RegExp(`did not answer within ${limit} ms; the call was cancelled`).test(r.message))
        failures.push(`${r.tool}: ${r.message}`);
      // Not before the limit, and well before the client's own 60 s default.
      if (r.ms < limit - 50 || r.ms > limit + 4000)
        failures.push(`${r.tool}: timed out after ${r.ms} ms (limit ${limit})`);
    }
    // The same session keeps working.
    assert.equal(
      textOf(await client.callTool({ name: 'echo__echo', arguments: { text: 'still usable' } })),
      'echo: still usable',
    );
    assert.ok((await client.listTools()).tools.length > 10);
    // Cancellation reached both upstreams, once per timed-out call.
    await waitFor(
      async () => (await cancelledCount(client, 'slow__cancelled')) - before.slow === HANGS / 2,
      'slow to see every cancellation',
      10_000,
    );
    await waitFor(
      async () => (await cancelledCount(client, 'bare__cancelled')) - before.bare === HANGS / 2,
      'bare to see every cancellation',
      10_000,
    );

    // A caller that gives up: its abort becomes notifications/cancelled upstream too.
    const aborts = Array.from({ length: 10 }, () => {
      const controller = new AbortController();
      const p = client
        .callTool({ name: 'bare__hang', arguments: {} }, undefined, { signal: controller.signal })
        .catch((e: Error) => e);
      setTimeout(() => controller.abort('caller gave up'), 150);
      return p;
    });
    const aborted = await Promise.all(aborts);
    assert.ok(aborted.every((e) => e instanceof Error));
    await waitFor(
      async () => (await cancelledCount(client, 'bare__cancelled')) - before.bare === HANGS / 2 + 10,
      'bare to see the aborts',
      10_000,
    );
    const slowest = Math.max(...results.map((r) => r.ms));
    report('hang-timeout-cancel', {
      calls: HANGS + 10 + 8,
      faultsInjected: HANGS + 10,
      timedOut: results.length - failures.length,
      aborted: aborted.length,
      cancellationsSeenUpstream: HANGS + 10,
      failures: failures.length,
      slowestTimeoutMs: slowest,
      otherUpstreamWhileHungMs: echoMs,
      brokerRssMbStart: rssStart,
      brokerRssMbEnd: rssMb(broker.proc.pid!),
    });
    assert.deepEqual(failures, []);
    assert.ok(echoMs < 2000, `a hung upstream does not delay another (${echoMs} ms)`);
    assert.equal((await status(client, 'slow')).state, 'running', 'a hang is not a crash: no restart');
  });

  it('a request the client cancels does not leave its POST open forever', async () => {
    const http = new RawHttp(broker.port, broker.token);
    const session = new RawSession(http, 'cancel');
    await session.initialize();
    const REPS = 20;
    const problems: string[] = [];
    let slowest = 0;
    for (let rep = 0; rep < REPS; rep++) {
      const id = `c-${rep}`;
      const started = Date.now();
      const call = session
        .post(session.call(rep % 2 ? 'bare__hang' : 'slow__hang', {}, id), { timeoutMs: 15_000 })
        .catch((e: Error) => e);
      await new Promise((r) => setTimeout(r, 100));
      const ack = await session.post({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: id, reason: 'test' },
      });
      if (ack.status !== 202) problems.push(`rep ${rep}: cancellation got HTTP ${ack.status}`);
      const res = await call;
      slowest = Math.max(slowest, Date.now() - started);
      if (res instanceof Error) problems.push(`rep ${rep}: the cancelled POST stayed open (${res.message})`);
      else if (!(
        res.status === 200 &&
        (res.messages.length === 0 || res.messages.every((m) => m.id === id && isJsonRpcError(m)))
      ))
        problems.push(`rep ${rep}: HTTP ${res.status} ${res.body.slice(0, 160)}`);
    }
    assert.equal(await session.close(), 200);
    http.close();
    report('cancelled-post-ends', {
      repetitions: REPS,
      calls: REPS * 2,
      faultsInjected: REPS,
      failures: problems.length,
      slowestMs: slowest,
    });
    assert.deepEqual(problems.slice(0, 5), []);
  });
});
