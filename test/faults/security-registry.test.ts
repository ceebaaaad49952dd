// Security round 2, registry side, against the real broker: definition files that symbolic links take
// outside the registry root (finding 16) are refused at start and when they appear later, and never
// start a process; links that stay inside the root still work; and refusals of hostile long names
// quote them cut short instead of whole.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
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
import { facade, faultServer, noteUpstreams, report, startBroker, status, type Json } from './lib';

/** A trusted server that, if it ever ran, would leave `marker` behind and keep running. */
function markerServer(name: string, marker: string): string {
  const leaveMarker = `require('fs').writeFileSync(${JSON.stringify(marker)}, String(process.pid));`;
  const script = `${leaveMarker} setInterval(() => {}, 9e3);`;
  const command = JSON.stringify(process.execPath);
  return `name: ${name}\ntrust: trusted\ncommand: ${command}\nargs: ["-e", ${JSON.stringify(script)}]\n`;
}

describe('faults: registry security (symbolic links, long names)', function () {
  this.timeout(120_000);
  let base: string;
  let root: string;
  let outside: string;
  let broker: BrokerProcess;
  let operator: Client;
  const markers: string[] = [];

  const problems = async (): Promise<Json[]> => (await facade(operator, 'registry_problems')).problems as Json[];
  const serverNames = async (): Promise<string[]> =>
    ((await facade(operator, 'list_servers')).servers as Json[]).map((s) => s.name as string);

  before(async () => {
    base = tempDir('sb-fault-links-');
    root = path.join(base, 'ws');
    outside = path.join(base, 'outside');
    for (const name of ['evil', 'late']) {
      const marker = path.join(outside, `${name}.started`);
      markers.push(marker);
      writeRegistry(outside, { [`${name}.yaml`]: markerServer(name, marker) });
    }
    writeRegistry(root, {
      'mcp-servers.d/echo.yaml': faultServer('echo', 'bare.mjs'),
      'shared/linked.yaml': faultServer('linked', 'bare.mjs'),
    });
    fs.symlinkSync(path.join(outside, 'evil.yaml'), path.join(root, 'mcp-servers.d', 'evil.yaml'));
    fs.symlinkSync('../shared/linked.yaml', path.join(root, 'mcp-servers.d', 'linked.yaml'));
    broker = await startBroker({ root });
    operator = await connect(broker.url, broker.token, 'operator');
    await waitFor(async () => (await status(operator, 'echo')).state === 'running', 'echo running', 30_000);
    await waitFor(async () => (await status(operator, 'linked')).state === 'running', 'linked running', 30_000);
    noteUpstreams(broker);
  });

  after(async () => {
    await operator?.close().catch(() => undefined);
    await broker?.stop();
    removeTempDirs();
  });

  it('refuses a definition linked from outside the root at start, with file and line, and runs the rest', async () => {
    const link = path.join(root, 'mcp-servers.d', 'evil.yaml');
    const found = (await problems()).filter((p) => p.file === link);
    assert.equal(found.length, 1, JSON.stringify(await problems(), null, 2));
    assert.equal(found[0].severity, 'error');
    assert.deepEqual([found[0].line, found[0].column], [1, 1]);
    assert.match(found[0].message, /symbolic link to .*evil\.yaml, outside the registry root .*; refusing to load it/);
    assert.match(found[0].text, /^mcp-servers\.d\/evil\.yaml:1:1 error: /);
    const names = await serverNames();
    assert.ok(!names.includes('evil'), `evil is not a server: ${names.join(', ')}`);
    assert.deepEqual(names.filter((n) => n === 'echo' || n === 'linked').sort(), ['echo', 'linked']);
    assert.equal(fs.existsSync(markers[0]), false, 'the linked definition never started');
  });

  it('refuses such a link added while the broker runs, and still follows a new link inside the root', async () => {
    const late = path.join(root, 'mcp-servers.d', 'late.yaml');
    writeRegistry(root, { 'shared/inside.yaml': faultServer('inside', 'bare.mjs') });
    fs.symlinkSync(path.join(outside, 'late.yaml'), late);
    fs.symlinkSync('../shared/inside.yaml', path.join(root, 'mcp-servers.d', 'inside.yaml'));
    // Once the in-root link runs and the outside one is reported, the broker has reconciled both.
    await waitFor(async () => (await status(operator, 'inside')).state === 'running', 'inside running', 30_000);
    const found = await waitFor(async () => (await problems()).find((p) => p.file === late), 'the late link reported');
    assert.match(found.message, /symbolic link to .*late\.yaml, outside the registry root/);
    assert.ok(!(await serverNames()).includes('late'));
    noteUpstreams(broker);
    assert.deepEqual(
      markers.filter((m) => fs.existsSync(m)),
      [],
      'no linked definition from outside the root ever started',
    );
    report('registry-symlinks', { refusedLinks: 2, followedInsideLinks: 2, startedFromOutside: 0 });
  });

  it('quotes a hostile 10,000-character name cut short in every upsert refusal', async () => {
    const name = 'x'.repeat(10_000);
    const definitions: [string, Json][] = [
      ['upsert_server', { name, trust: 'trusted', command: process.execPath }],
      ['upsert_prompt', { name, messages: [{ role: 'user', content: 'hi' }] }],
      ['upsert_client', { name, mcp_allow: ['read'] }],
    ];
    let longest = 0;
    for (const [tool, definition] of definitions) {
      const result = await operator.callTool({ name: `switchboard__${tool}`, arguments: { definition } });
      const text = textOf(result);
      assert.equal(result.isError, true, `${tool} accepted the name`);
      assert.match(text, /10000 characters/, `${tool} says how long the name is: ${text.slice(0, 300)}`);
      assert.ok(!text.includes('x'.repeat(200)), `${tool} quoted the name whole (${text.length} characters)`);
      longest = Math.max(longest, text.length);
    }
    report('registry-long-names', { nameChars: name.length, longestRefusalChars: longest });
  });
});
