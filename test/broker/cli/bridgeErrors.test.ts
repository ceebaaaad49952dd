// `switchboard connect` when something is wrong or not ready yet: an undeclared client is named
// with the fix (not a reconnect loop of "Unauthorized"), a refused token is said once and every
// request gets the reason, and a broker the bridge just started answers its first tools/list with the
// tools of servers that were still starting.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { PassThrough } from 'node:stream';
import * as readline from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Bridge, reconnectDelayMs } from '../../../src/broker/cli/bridge';
import { liveRecord } from '../../../src/broker/daemon/discovery';
import { stopBroker } from '../../../src/broker/daemon/brokerLauncher';
import { runtimePaths } from '../../../src/broker/shared/userState';
import {
  BROKER_JS,
  fixture,
  fixtureServer,
  removeTempDirs,
  startBrokerProcess,
  tempDir,
  writeRegistry,
} from '../../helpers/broker';

describe('switchboard connect: errors and a fresh broker', function () {
  this.timeout(60_000);
  after(() => removeTempDirs());

  it('names the missing client file and exits 2 instead of retrying', () => {
    const root = tempDir('sb-bridge-undeclared-');
    writeRegistry(root, { 'mcp-servers.d/echo.yaml': fixtureServer('echo', 'echo.mjs') });
    const r = spawnSync(
      process.execPath,
      [BROKER_JS, 'connect', '--root', root, '--client', 'terminal', '--no-start'],
      {
        env: { ...process.env, SWITCHBOARD_HOME: tempDir('sb-home-') },
        encoding: 'utf8',
        input: '',
        timeout: 20_000,
      },
    );
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /client 'terminal' is not declared .*clients\.d\/terminal\.yaml/);
    assert.match(r.stderr, /mcp_allow: \[read\]/);
    assert.doesNotMatch(r.stderr, /has no mcp-servers\.d/);

    const empty = tempDir('sb-bridge-noregistry-');
    const r2 = spawnSync(process.execPath, [BROKER_JS, 'connect', '--root', empty, '--client', 'terminal'], {
      env: { ...process.env, SWITCHBOARD_HOME: tempDir('sb-home-') },
      encoding: 'utf8',
      input: '',
      timeout: 20_000,
    });
    assert.equal(r2.status, 2, r2.stderr);
    assert.match(r2.stderr, /has no mcp-servers\.d\/ either: is --root the folder that holds the registry\?/);
  });

  it('says once that the broker refused its token, and answers every request with why', async () => {
    const root = tempDir('sb-bridge-refused-');
    writeRegistry(root, { 'mcp-servers.d/echo.yaml': fixtureServer('echo', 'echo.mjs') });
    const broker = await startBrokerProcess({ root });
    const input = new PassThrough();
    const output = new PassThrough();
    const logged: string[] = [];
    let discovered = 0;
    const bridge = new Bridge({
      discover: async () => {
        discovered++;
        return { url: broker.url, token: 'not-a-token-of-this-broker' };
      },
      input,
      output,
      log: (l) => logged.push(l),
    });
    const replies: Record<string, any>[] = [];
    readline.createInterface({ input: output }).on('line', (l) => replies.push(JSON.parse(l)));
    const running = bridge.run();
    const init = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } };
    input.write(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: init }) + '\n');
    input.write(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }) + '\n');
    // Long enough for the old behaviour (a reconnect every 500 ms) to show several times.
    await new Promise((r) => setTimeout(r, 2500));
    input.end();
    await running;
    await broker.stop();
    assert.equal(discovered, 1, 'no reconnect loop');
    assert.equal(logged.filter((l) => /refused/.test(l)).length, 1, logged.join('\n'));
    assert.equal(replies.filter((r) => r.method?.endsWith('list_changed')).length, 0, 'no list_changed storm');
    for (const id of [1, 2]) {
      const reply = replies.find((r) => r.id === id);
      assert.match(
        reply?.error?.message ?? '',
        /The broker refused this bridge: Unauthorized/,
        JSON.stringify(replies),
      );
    }
  });

  it('backs off between reconnect attempts, up to 5 s', () => {
    assert.deepEqual([0, 1, 2, 3, 4, 5, 9].map(reconnectDelayMs), [250, 500, 1000, 2000, 4000, 5000, 5000]);
  });

  it('a broker it started answers the first tools/list with servers that were still starting', async () => {
    const root = tempDir('sb-bridge-fresh-');
    const home = tempDir('sb-home-');
    // echo.mjs, loaded 1.5 s late: still starting when the bridge's client first lists.
    const late = `setTimeout(() => import(require('node:url').pathToFileURL(process.argv[1]).href), 1500)`;
    writeRegistry(root, {
      'mcp-servers.d/late.yaml':
        `name: late\ntrust: trusted\ncommand: ${JSON.stringify(process.execPath)}\n` +
        `args: ["-e", ${JSON.stringify(late)}, ${JSON.stringify(fixture('echo.mjs'))}]\n`,
    });
    const env = { ...process.env, SWITCHBOARD_HOME: home, SWITCHBOARD_ACCEPT_WORKSPACE_TRUST: '1' };
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BROKER_JS, 'connect', '--root', root],
      env: env as Record<string, string>,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'stdio-agent', version: '1' });
    try {
      await client.connect(transport);
      const names = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes('late__echo'), `first list: ${names.join(', ')}`);
    } finally {
      await client.close();
      const record = await liveRecord(runtimePaths(root, env), root);
      if (record) await stopBroker(record.pid, runtimePaths(root, env));
    }
  });
});
