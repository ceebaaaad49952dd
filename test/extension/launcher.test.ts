// The one broker launch path, with real processes: `switchboard connect` starts the bundled broker
// through it when none runs, a broker that dies at start is explained by its log, and stop ends it.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { brokerLogFile } from '../../src/broker/daemon/brokerLog';
import { liveRecord } from '../../src/broker/daemon/discovery';
import { findOrLaunchBroker, launchBroker, stopBroker } from '../../src/broker/daemon/brokerLauncher';
import { BROKER_NODE_FLAGS, isProcessAlive } from '../../src/broker/daemon/runtime';
import { runtimePaths } from '../../src/broker/shared/userState';
import { BROKER_JS, fixtureServer, removeTempDirs, tempDir, textOf, waitFor, writeRegistry } from '../helpers/broker';

describe('broker launcher (real processes)', function () {
  this.timeout(60_000);
  let root: string;
  let home: string;
  let env: NodeJS.ProcessEnv;
  const pids = new Set<number>();

  beforeEach(() => {
    root = tempDir('sb-launch-root-');
    home = tempDir('sb-launch-home-');
    env = { ...process.env, SWITCHBOARD_HOME: home, SWITCHBOARD_ACCEPT_WORKSPACE_TRUST: '1' };
    writeRegistry(root, { 'mcp-servers.d/echo.yaml': fixtureServer('echo', 'echo.mjs') });
  });

  afterEach(async () => {
    for (const pid of pids) await stopBroker(pid, runtimePaths(root, env));
    pids.clear();
  });

  after(() => removeTempDirs());

  it('`switchboard connect` starts the broker when none runs, detached, with the broker flags and a log', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BROKER_JS, 'connect', '--root', root],
      env: env as Record<string, string>,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'stdio-agent', version: '1' });
    await client.connect(transport);
    try {
      const record = await liveRecord(runtimePaths(root, env), root);
      assert.ok(record, 'the bridge started a broker that answers for the root');
      pids.add(record.pid);
      const argv = fs.readFileSync(`/proc/${record.pid}/cmdline`, 'utf8').split('\0');
      for (const flag of BROKER_NODE_FLAGS)
        assert.ok(argv.includes(flag), `the broker runs with ${flag}: ${argv.join(' ')}`);
      assert.ok(argv.includes('--idle-exit'), 'a broker started for an agent exits when idle');
      const log = brokerLogFile(runtimePaths(root, env));
      assert.ok(fs.existsSync(log), 'its output goes to the broker log');
      assert.equal(fs.statSync(log).mode & 0o777, 0o600, 'the broker log is private to the user');
      await waitFor(
        async () => (await client.listTools()).tools.some((t) => t.name === 'echo__echo'),
        'echo through the bridge',
        20_000,
      );
      assert.equal(
        textOf(await client.callTool({ name: 'echo__echo', arguments: { text: 'launched' } })),
        'echo: launched',
      );
    } finally {
      await client.close();
    }
  });

  it('reuses the running broker instead of starting a second one', async () => {
    const first = await findOrLaunchBroker({ root, script: BROKER_JS, env, idleExitSeconds: 30 });
    pids.add(first.record.pid);
    assert.equal(first.started, true);
    const second = await findOrLaunchBroker({ root, script: BROKER_JS, env, idleExitSeconds: 30 });
    assert.equal(second.started, false);
    assert.equal(second.record.pid, first.record.pid);
    await stopBroker(first.record.pid, runtimePaths(root, env));
    assert.ok(!isProcessAlive(first.record.pid), 'stop ends the process');
    assert.ok(!fs.existsSync(runtimePaths(root, env).recordFile), 'and its discovery record');
  });

  it('explains a broker that exits before it is ready with the last lines of its log', async () => {
    const script = path.join(tempDir('sb-launch-bad-'), 'broken-broker.js');
    fs.writeFileSync(
      script,
      "process.stderr.write('[switchboard] cannot read the registry: disk on fire\\n'); process.exit(3);\n",
    );
    await assert.rejects(launchBroker({ root, script, env, idleExitSeconds: 30 }), (err: Error) => {
      assert.match(err.message, /exited with code 3 before it was ready/);
      assert.match(err.message, /disk on fire/);
      return true;
    });
  });

  it('explains a broker bundle that is not there', async () => {
    await assert.rejects(
      launchBroker({ root, script: path.join(root, 'missing.js'), env, idleExitSeconds: 30 }),
      /broker bundle is missing .*npm run build/,
    );
  });
});
