// The extension's broker lifecycle, in plain Node against the real built broker: start, reuse,
// restart after a crash (with backoff), stop, and Restricted Mode.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BrokerConnection, type Phase } from '../../src/extension/brokerConnection';
import type { BrokerState } from '../../src/broker/control/controlApi';
import { BROKER_ENV, BROKER_NODE_FLAGS } from '../../src/broker/daemon/runtime';
import { BROKER_JS, fixtureServer, tempDir, waitForEvent, writeRegistry } from '../helpers/broker';

const quiet = { info() {}, warn() {}, error() {} };

/** Waits for `pred` to hold, checked now and on every change of the connection and its state. */
const until = <T>(conn: BrokerConnection, pred: () => T | undefined | false, timeoutMs = 20_000, what = 'condition') =>
  waitForEvent(conn, ['change', 'state'], pred, what, {
    timeoutMs,
    checkNow: true,
    detail: () => `phase ${conn.phase}, error ${conn.lastError ?? '-'}`,
  });

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('extension: BrokerConnection (real broker)', function () {
  this.timeout(60_000);
  let root: string;
  let home: string;
  const conns: BrokerConnection[] = [];
  const pids = new Set<number>();

  const make = (untrusted = false): BrokerConnection => {
    const conn = new BrokerConnection({
      root,
      brokerScript: BROKER_JS,
      execPath: process.execPath,
      env: { ...process.env, SWITCHBOARD_HOME: home, SWITCHBOARD_ACCEPT_WORKSPACE_TRUST: '1' },
      untrusted,
      idleExitSeconds: 30,
      log: quiet,
      livenessMs: 200,
      backoffMs: 100,
      maxBackoffMs: 1000,
    });
    conn.on('change', () => {
      if (conn.record) pids.add(conn.record.pid);
    });
    conns.push(conn);
    return conn;
  };

  beforeEach(() => {
    root = tempDir('sb-ext-root-');
    home = tempDir('sb-ext-home-');
    writeRegistry(root, { 'mcp-servers.d/echo.yaml': fixtureServer('echo', 'echo.mjs') });
  });

  afterEach(async () => {
    for (const c of conns.splice(0)) await c.dispose();
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        /* gone */
      }
    }
    pids.clear();
  });

  it('starts the bundled broker, follows its state resource, and a second window reuses it', async () => {
    const a = make();
    await a.start();
    assert.equal(a.phase, 'connected');
    assert.equal(a.startedHere, true);
    const running = await until(
      a,
      () => a.state?.servers.find((s) => s.name === 'echo' && s.state === 'running'),
      20_000,
      'echo running',
    );
    assert.ok(running.tools.some((t) => t.name === 'echo'));
    assert.ok(fs.existsSync(a.logFile), 'the broker writes its log where the extension tails it');
    const argv = fs.readFileSync(`/proc/${a.record!.pid}/cmdline`, 'utf8').split('\0');
    for (const flag of BROKER_NODE_FLAGS)
      assert.ok(argv.includes(flag), `the broker runs with ${flag}: ${argv.join(' ')}`);
    const environ = fs.readFileSync(`/proc/${a.record!.pid}/environ`, 'utf8').split('\0');
    for (const [k, v] of Object.entries(BROKER_ENV))
      assert.ok(environ.includes(`${k}=${v}`), `the broker runs with ${k}=${v}`);

    const b = make();
    await b.start();
    assert.equal(b.startedHere, false);
    assert.equal(b.record?.pid, a.record?.pid, 'one broker per root');

    // A change made through one window reaches the other through the subscription (no polling).
    await a.call('disable_server', { name: 'echo' });
    await until(
      b,
      () => b.state?.servers.find((s) => s.name === 'echo' && s.state === 'disabled'),
      10_000,
      'b sees echo disabled',
    );
  });

  it('npm start and the benchmarks launch the broker with the same node flags', () => {
    const repo = path.resolve(__dirname, '../../..');
    const start = JSON.parse(fs.readFileSync(path.join(repo, 'package.json'), 'utf8')).scripts.start as string;
    const bench = fs.readFileSync(path.join(repo, 'bench/lib/systems.mjs'), 'utf8');
    const benchFlags = /export const BROKER_NODE_FLAGS = (\[.*\]);/.exec(bench)?.[1];
    assert.deepEqual(
      JSON.parse(String(benchFlags).replace(/'/g, '"')),
      [...BROKER_NODE_FLAGS],
      'bench/lib/systems.mjs',
    );
    const benchEnv = /export const BROKER_ENV = (\{.*\});/.exec(bench)?.[1];
    assert.deepEqual(
      JSON.parse(
        String(benchEnv)
          .replace(/'/g, '"')
          .replace(/(\w+):/g, '"$1":'),
      ),
      { ...BROKER_ENV },
      'bench/lib/systems.mjs BROKER_ENV',
    );
    assert.ok(
      start.includes(`node ${BROKER_NODE_FLAGS.join(' ')} dist/broker.js serve`),
      `package.json start: ${start}`,
    );
  });

  it('the launched broker returns memory once it goes quiet (its idle collector has gc)', async function () {
    this.timeout(45_000);
    const conn = make();
    await conn.start();
    await until(
      conn,
      () => conn.state?.servers.find((s) => s.name === 'echo' && s.state === 'running'),
      20_000,
      'echo running',
    );
    for (let i = 0; i < 50; i++) await conn.call('list_servers', {});
    // Each read is a request, so the reads are spaced wider than the collector's 2 s quiet period
    // (other requests, such as the refresh after tool tokens are counted, may come in between).
    let memory = conn.state!.broker.memory;
    for (let i = 0; i < 6 && memory.idleCollections < 1; i++) {
      await new Promise((r) => setTimeout(r, 3_000));
      await conn.refresh();
      memory = conn.state!.broker.memory;
    }
    assert.ok(memory.idleCollections >= 1, `idle collections: ${memory.idleCollections}`);
    assert.ok(memory.rssBytes > 0 && memory.heapUsedBytes > 0);
  });

  it('restarts the broker after it is killed, with backoff, and reconnects', async () => {
    const conn = make();
    await conn.start();
    const first = conn.record!.pid;
    const phases: Phase[] = [];
    conn.on('change', () => phases.push(conn.phase));
    process.kill(first, 'SIGKILL');
    await until(
      conn,
      () => conn.phase === 'connected' && conn.record && conn.record.pid !== first,
      20_000,
      'a new broker',
    );
    assert.ok(phases.includes('reconnecting'), `went through reconnecting: ${phases.join(',')}`);
    assert.notEqual(conn.record!.pid, first);
    assert.ok(!alive(first));
    const state = await until(
      conn,
      () => conn.state?.servers.find((s) => s.state === 'running') && conn.state,
      20_000,
      'echo running again',
    );
    assert.equal((state as BrokerState).broker.pid, conn.record!.pid);
  });

  it('stop ends the broker for good until start', async () => {
    const conn = make();
    await conn.start();
    const pid = conn.record!.pid;
    await conn.stop();
    assert.equal(conn.phase, 'stopped');
    assert.ok(!alive(pid));
    await new Promise((r) => setTimeout(r, 800));
    assert.equal(conn.phase, 'stopped', 'no automatic restart after an operator stop');
    await conn.start();
    assert.equal(conn.phase, 'connected');
    assert.notEqual(conn.record!.pid, pid);
  });

  it('in Restricted Mode spawns no server; granting trust restarts the broker normally', async () => {
    const conn = make(true);
    await conn.start();
    assert.equal(conn.state?.broker.untrusted, true);
    const echo = conn.state!.servers.find((s) => s.name === 'echo')!;
    assert.equal(echo.state, 'blocked');
    assert.equal(echo.pid, undefined);
    const untrustedPid = conn.record!.pid;
    await conn.setUntrusted(false);
    assert.equal(conn.state?.broker.untrusted, false);
    assert.notEqual(conn.record!.pid, untrustedPid);
    await until(
      conn,
      () => conn.state?.servers.find((s) => s.name === 'echo' && s.state === 'running'),
      20_000,
      'echo running after trust',
    );
  });

  it('a trusted window replaces a broker left running in Restricted Mode', async () => {
    const restricted = make(true);
    await restricted.start();
    const pid = restricted.record!.pid;
    await restricted.dispose();
    const trusted = make(false);
    await trusted.start();
    assert.notEqual(trusted.record!.pid, pid);
    assert.equal(trusted.state?.broker.untrusted, false);
  });

  it('reports a broker that cannot start, in words', async () => {
    const conn = new BrokerConnection({
      root,
      brokerScript: '/nonexistent/broker.js',
      env: { ...process.env, SWITCHBOARD_HOME: home },
      untrusted: false,
      log: quiet,
    });
    conns.push(conn);
    await assert.rejects(conn.start(), /broker bundle is missing/);
    assert.equal(conn.phase, 'failed');
  });
});
