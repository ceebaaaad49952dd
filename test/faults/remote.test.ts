// Fault: a remote (Streamable HTTP or legacy SSE) upstream that goes away: killed mid-call and
// restarted on the same port, or restarted between calls so the broker's session is stale (404).
// Proves: calls in flight fail fast with a clear error, the broker notices the loss, reconnects
// with a new session by its restart policy, and calls work again — against the new process.
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  connect,
  removeTempDirs,
  tempDir,
  textOf,
  waitFor,
  writeRegistry,
  type BrokerProcess,
} from '../helpers/broker';
import { report, startBroker, startFixtureHttp, status, type FixtureHttp } from './lib';

const POLICY =
  'restart:\n  maxRetries: 50\n  backoffMs: 50\n  maxBackoffMs: 200\n  resetAfterMs: 0\n  maxPerHour: 100000\n' +
  'timeouts:\n  startupMs: 3000\n  callMs: 8000\n';
const REPS = 5;

function remote(name: string, transport: 'http' | 'sse', url: string): string {
  return `name: ${name}\ntrust: trusted\ntransport: ${transport}\nurl: ${url}\n${POLICY}`;
}

describe('faults: remote upstream drops and stale sessions', function () {
  this.timeout(240_000);
  let broker: BrokerProcess;
  let client: Client;
  const fixtures: Record<string, FixtureHttp> = {};
  const stats = {
    calls: 0,
    faultsInjected: 0,
    failedCalls: 0,
    inFlightFailedFast: 0,
    recoveries: 0,
    slowestRecoveryMs: 0,
    slowestInFlightFailureMs: 0,
  };

  before(async () => {
    fixtures.http = await startFixtureHttp('slow.mjs', 0, 'http');
    fixtures.sse = await startFixtureHttp('slow.mjs', 0, 'sse');
    const root = tempDir('sb-fault-remote-');
    writeRegistry(root, {
      'mcp-servers.d/rhttp.yaml': remote('rhttp', 'http', fixtures.http.url),
      'mcp-servers.d/rsse.yaml': remote('rsse', 'sse', fixtures.sse.url),
    });
    broker = await startBroker({ root });
    client = await connect(broker.url, broker.token, 'remote');
    await waitFor(
      async () =>
        (await status(client, 'rhttp')).state === 'running' && (await status(client, 'rsse')).state === 'running',
      'both remotes',
      30_000,
    );
  });

  after(async () => {
    await client?.close().catch(() => undefined);
    await broker?.stop();
    for (const f of Object.values(fixtures)) await f.stop();
    report('remote-reconnect', stats);
    removeTempDirs();
  });

  /** Calls until one succeeds (bounded), counting the failures on the way. */
  async function recovers(server: string, since: number): Promise<void> {
    const deadline = Date.now() + 20_000;
    let last = '';
    while (Date.now() < deadline) {
      stats.calls++;
      try {
        const r = await client.callTool({ name: `${server}__slow`, arguments: { steps: 1, delayMs: 1 } });
        assert.match(textOf(r), /done 1 steps/);
        stats.recoveries++;
        stats.slowestRecoveryMs = Math.max(stats.slowestRecoveryMs, Date.now() - since);
        return;
      } catch (err) {
        stats.failedCalls++;
        last = (err as Error).message;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    throw new Error(
      `${server} did not recover within 20 s; last error: ${last}; status: ${JSON.stringify(await status(client, server))}`,
    );
  }

  for (const kind of ['http', 'sse'] as const) {
    const server = kind === 'http' ? 'rhttp' : 'rsse';

    it(`${kind}: restarted between calls (stale session): reconnects with a new session, ${REPS} times`, async () => {
      for (let rep = 0; rep < REPS; rep++) {
        await recovers(server, Date.now());
        const restarts = (await status(client, server)).restarts as number;
        const port = fixtures[kind].port;
        await fixtures[kind].stop('SIGTERM');
        fixtures[kind] = await startFixtureHttp('slow.mjs', port, kind);
        stats.faultsInjected++;
        await recovers(server, Date.now());
        const after = await status(client, server);
        assert.equal(after.state, 'running');
        assert.ok(
          after.restarts > restarts,
          `${server} reconnected by its restart policy (restarts ${restarts} → ${after.restarts})`,
        );
      }
      // The counter lives in the fixture process: a fresh 0 proves the calls reach the new one.
      const counted = await client.callTool({ name: `${server}__cancelled`, arguments: {} });
      assert.equal((counted.structuredContent as { cancelled: number }).cancelled, 0);
    });

    it(`${kind}: killed with calls in flight: they fail fast and clearly, then it reconnects, ${REPS} times`, async () => {
      for (let rep = 0; rep < REPS; rep++) {
        await recovers(server, Date.now());
        const inFlight = Array.from({ length: 10 }, () =>
          client.callTool({ name: `${server}__hang`, arguments: {} }).then(
            () => '',
            (e: Error) => e.message,
          ),
        );
        await new Promise((r) => setTimeout(r, 200));
        const port = fixtures[kind].port;
        const killedAt = Date.now();
        await fixtures[kind].stop('SIGKILL');
        stats.faultsInjected++;
        const messages = await Promise.all(inFlight);
        stats.calls += messages.length;
        const ms = Date.now() - killedAt;
        stats.slowestInFlightFailureMs = Math.max(stats.slowestInFlightFailureMs, ms);
        for (const m of messages) {
          assert.match(
            m,
            new RegExp(`Server '${server}' (stopped while handling this call|crashed and is waiting to restart)`),
            m,
          );
          stats.failedCalls++;
        }
        assert.ok(ms < 5000, `in-flight calls failed after ${ms} ms, before the 8 s call timeout`);
        stats.inFlightFailedFast += messages.length;
        fixtures[kind] = await startFixtureHttp('slow.mjs', port, kind);
        await recovers(server, killedAt);
      }
    });
  }
});
