// Fault: upstreams that write garbage to stdout, a 50 MB line, or exit at start.
// Proves: the crash-loop breaker opens after restart.maxRetries and the state says `failed`
// with the reason; no further restart is attempted and no process is left; the broker's memory
// stays bounded while it reads the junk; tolerable noise (non-JSON lines around real messages)
// is skipped and logged without breaking the server; the healthy upstream is never disturbed.
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
import { descendants, facade, faultServer, noteUpstreams, report, rssMb, sleep, startBroker, status } from './lib';

const BREAKER = 'restart:\n  maxRetries: 2\n  backoffMs: 10\n  maxBackoffMs: 50\n';

describe('faults: garbage, huge lines and crash loops', function () {
  this.timeout(180_000);
  let broker: BrokerProcess;
  let client: Client;
  let rssSamples: number[] = [];
  let sampler: NodeJS.Timeout | undefined;
  let rssStart = 0;
  let peakAll = 0;

  before(async () => {
    const root = tempDir('sb-fault-loop-');
    writeRegistry(root, {
      'mcp-servers.d/healthy.yaml': fixtureServer('healthy', 'echo.mjs'),
      'mcp-servers.d/noisy.yaml': fixtureServer('noisy', 'crashy.mjs', ['--garbage']),
    });
    broker = await startBroker({ root });
    client = await connect(broker.url, broker.token, 'loop');
    await waitFor(
      async () =>
        (await status(client, 'healthy')).state === 'running' && (await status(client, 'noisy')).state === 'running',
      'upstreams',
      30_000,
    );
    noteUpstreams(broker);
    rssStart = rssMb(broker.proc.pid!);
    sampler = setInterval(() => {
      const r = rssMb(broker.proc.pid!);
      rssSamples.push(r);
      peakAll = Math.max(peakAll, r);
      noteUpstreams(broker);
    }, 25);
  });

  after(async () => {
    clearInterval(sampler);
    await client?.close().catch(() => undefined);
    await broker?.stop();
    removeTempDirs();
  });

  async function addAndWaitFailed(
    name: string,
    yaml: string,
    timeoutMs: number,
  ): Promise<{ s: Record<string, any>; ms: number }> {
    const t0 = Date.now();
    writeRegistry(broker.root, { [`mcp-servers.d/${name}.yaml`]: yaml });
    const s = await waitFor(
      async () => {
        const st = await status(client, name).catch(() => undefined);
        return st?.state === 'failed' ? st : undefined;
      },
      `${name} to end failed`,
      timeoutMs,
      50,
    );
    return { s, ms: Date.now() - t0 };
  }

  async function breakerHolds(name: string): Promise<void> {
    const at = (await status(client, name)).restarts;
    await sleep(1000);
    const later = await status(client, name);
    assert.equal(later.state, 'failed', `${name} stays failed`);
    assert.equal(later.restarts, at, `${name}: no restart once the breaker is open`);
    assert.equal(later.pid, undefined);
  }

  it('skips non-JSON lines around real messages: the server keeps serving, the noise is logged', async () => {
    for (let i = 0; i < 50; i++)
      assert.equal(textOf(await client.callTool({ name: 'noisy__ok', arguments: {} })), 'ok');
    const logs = await facade(client, 'tail_logs', { name: 'noisy', lines: 200 });
    assert.ok(logs.lines.some((l: any) => /ignored non-JSON output on stdout: this is not json/.test(l.text)));
    assert.equal((await status(client, 'noisy')).state, 'running');
    report('garbage-around-messages', { calls: 50, faultsInjected: 100, failures: 0, state: 'running' });
  });

  it('a server that only floods stdout with junk fails its handshake, crash-loops and opens the breaker', async () => {
    const { s, ms } = await addAndWaitFailed(
      'flood',
      faultServer('flood', 'garbage.mjs', ['--seconds', '20'], `${BREAKER}timeouts:\n  startupMs: 1500\n`),
      30_000,
    );
    assert.match(
      s.lastError,
      /^handshake failed: .*timed out/,
      'the reason is the handshake timeout, not the exit the broker caused',
    );
    assert.match(s.lastError, /gave up after 2 restarts/);
    assert.equal(s.restarts, 2);
    await breakerHolds('flood');
    const logs = await facade(client, 'tail_logs', { name: 'flood', lines: 500 });
    assert.ok(logs.lines.length <= 500, 'the log ring is bounded');
    assert.ok(
      logs.lines.every((l: any) => l.text.length <= 2100),
      'each logged line is bounded',
    );
    report('garbage-flood', {
      faultsInjected: 3,
      state: s.state,
      lastError: s.lastError.slice(0, 160),
      msToFailed: ms,
      brokerRssMbPeak: Math.max(...rssSamples),
    });
  });

  it('a 50 MB stdout line is cut off at the 32 MB limit, every time, and the breaker opens', async () => {
    // The baseline is this test's own start: the flood test before it can leave 200 MB of garbage
    // that V8 has not collected yet, and that is not what this test measures.
    const base = rssMb(broker.proc.pid!);
    rssSamples = [];
    const { s, ms } = await addAndWaitFailed(
      'huge',
      fixtureServer('huge', 'crashy.mjs', ['--huge-line', '50'], BREAKER),
      90_000,
    );
    assert.match(s.lastError, /^process wrote a line of more than 32 MB to stdout/, 'the reason leads the message');
    assert.match(s.lastError, /gave up after 2 restarts/);
    await breakerHolds('huge');
    const peak = Math.max(...rssSamples);
    // Three more 50 MB lines (restart_server resets the breaker): memory must not grow per line.
    rssSamples = [];
    await facade(client, 'restart_server', { name: 'huge' });
    await waitFor(async () => (await status(client, 'huge')).state === 'failed', 'huge to fail again', 90_000, 50);
    const peak2 = Math.max(...rssSamples);
    await sleep(500);
    const after = rssMb(broker.proc.pid!);
    report('huge-line-50MB', {
      faultsInjected: 6,
      bytesRefused: 6 * 50 * 1024 * 1024,
      state: s.state,
      lastError: s.lastError.slice(0, 160),
      msToFailed: ms,
      brokerRssMbStart: rssStart,
      brokerRssMbAtTestStart: base,
      brokerRssMbPeakFirst3: peak,
      brokerRssMbPeakNext3: peak2,
      brokerRssMbEnd: after,
    });
    // The broker holds at most one 32 MB partial line per upstream, never the 150 MB it was sent.
    assert.ok(peak < base + 160, `RSS peak ${peak} MB (${base} MB when this test began)`);
    assert.ok(peak2 < peak + 40, `no growth per refused line: peak ${peak} MB, then ${peak2} MB`);
  });

  it('a server that exits at start crash-loops into failed with its exit code and stderr', async () => {
    const { s, ms } = await addAndWaitFailed(
      'boom',
      fixtureServer('boom', 'crashy.mjs', ['--exit-at-start'], BREAKER),
      30_000,
    );
    assert.match(s.lastError, /exited with code 2/);
    assert.match(s.lastError, /boom: exiting at start/);
    assert.match(s.lastError, /gave up after 2 restarts/);
    await breakerHolds('boom');
    // restart_server clears the breaker and tries again; it fails the same way, bounded again.
    const again = await facade(client, 'restart_server', { name: 'boom' });
    const s2 = await waitFor(
      async () => {
        const st = await status(client, 'boom');
        return st.state === 'failed' ? st : undefined;
      },
      'boom to fail again',
      30_000,
    );
    assert.match(s2.lastError, /exited with code 2/);
    report('exit-at-start', {
      faultsInjected: 6,
      state: s2.state,
      lastError: s.lastError.slice(0, 160),
      msToFailed: ms,
      restartAfterManualRestart: again.state,
    });
  });

  it('the healthy upstream was never disturbed; no process of a failed server is left', async () => {
    const healthy = await status(client, 'healthy');
    assert.equal(healthy.state, 'running');
    assert.equal(healthy.restarts, 0);
    assert.equal(textOf(await client.callTool({ name: 'healthy__echo', arguments: { text: 'fine' } })), 'echo: fine');
    const children = descendants(broker.proc.pid!);
    assert.equal(children.length, 2, `only healthy and noisy run: ${children.join(',')}`);
    const rssEnd = rssMb(broker.proc.pid!);
    report('crash-loops', {
      brokerRssMbStart: rssStart,
      brokerRssMbEnd: rssEnd,
      brokerRssMbPeak: peakAll,
      childrenEnd: children.length,
    });
    // Memory freed by the junk is not always handed back to the OS, but it never grows past the peak.
    assert.ok(rssEnd <= peakAll + 10, `RSS after the junk: ${rssStart} → ${rssEnd} MB (peak ${peakAll} MB)`);
  });
});
