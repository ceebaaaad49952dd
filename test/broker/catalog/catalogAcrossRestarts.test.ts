// The persisted catalog end to end: a second broker lists what the first learned before any
// upstream is up, replaces it when the upstream confirms, and never serves what may not run.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  connect,
  fixtureServer,
  removeTempDirs,
  startBrokerProcess,
  tempDir,
  textOf,
  waitFor,
  writeRegistry,
  type BrokerProcess,
  status,
} from '../../helpers/broker';

type Json = Record<string, any>;

async function facade(client: Client, tool: string, args: Json = {}): Promise<Json> {
  const result = await client.callTool({ name: `switchboard__${tool}`, arguments: args });
  if (result.isError) throw new Error(textOf(result));
  return result.structuredContent as Json;
}

async function catalogVersion(client: Client): Promise<number> {
  const state = await client.readResource({ uri: 'switchboard://state' });
  return JSON.parse((state.contents[0] as { text: string }).text).broker.catalogVersion as number;
}

/** The one cache file under the per-user home (there is one workspace per test home). */
function cacheFileIn(home: string): string {
  const dir = path.join(home, 'workspaces');
  const [id] = fs.readdirSync(dir);
  return path.join(dir, id, 'catalog.json');
}

const toolNames = async (c: Client): Promise<string[]> => (await c.listTools()).tools.map((t) => t.name);

describe('catalog cache', function () {
  this.timeout(90_000);
  let root: string;
  let home: string;
  let delayFile: string;
  let broker: BrokerProcess | undefined;
  let client: Client | undefined;

  /** echo.mjs that waits for whatever the delay file says before its handshake. */
  const delayed = (name: string, extra: string[] = [], more = ''): string =>
    fixtureServer(name, 'echo.mjs', ['--delay-from', delayFile, ...extra], more);

  async function start(): Promise<Client> {
    broker = await startBrokerProcess({ root, home });
    client = await connect(broker.url, broker.token, 'operator');
    return client;
  }

  async function stop(): Promise<void> {
    await client?.close().catch(() => undefined);
    await broker?.stop();
    client = broker = undefined;
  }

  beforeEach(() => {
    root = tempDir('sb-cache-');
    home = tempDir('sb-cache-home-');
    delayFile = path.join(tempDir('sb-cache-delay-'), 'delay');
  });

  afterEach(stop);
  after(removeTempDirs);

  it('serves the last good catalog before the upstream is up, then the live one; list_changed if changed', async () => {
    writeRegistry(root, { 'mcp-servers.d/slowstart.yaml': delayed('slowstart') });
    let c = await start();
    await waitFor(async () => (await status(c, 'slowstart')).state === 'running', 'the first start');
    await stop();

    const file = cacheFileIn(home);
    assert.ok(!path.relative(home, file).startsWith('..'), 'kept under SWITCHBOARD_HOME');
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    assert.ok(!fs.readdirSync(root).some((f) => /catalog/i.test(f)), 'nothing in the registry');

    // The upstream's tools changed since: the cache lacks a tool it offers now. (A tool added to the
    // cache would not show: it is not among the tools pinned at the first start, so it is quarantined.)
    const cache = JSON.parse(fs.readFileSync(file, 'utf8'));
    const entry = cache.servers.slowstart;
    entry.lists.tools = entry.lists.tools.filter((t: Json) => t.name !== 'whoami');
    fs.writeFileSync(file, JSON.stringify(cache));

    fs.writeFileSync(delayFile, '4000');
    c = await start();
    let changed = 0;
    c.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed++;
    });
    const s = await status(c, 'slowstart');
    assert.equal(s.state, 'starting', 'the upstream is still in its handshake');
    assert.equal(s.catalog, 'cached');
    const cached = await toolNames(c);
    assert.ok(cached.includes('slowstart__echo') && !cached.includes('slowstart__whoami'), cached.join(', '));

    // A call to a cached tool waits for the start instead of failing.
    const echoed = await c.callTool({ name: 'slowstart__echo', arguments: { text: 'early' } });
    assert.equal(textOf(echoed), 'echo: early');
    assert.equal((await status(c, 'slowstart')).catalog, 'live');
    await waitFor(() => changed > 0, 'tools/list_changed for the replaced list');
    const live = await toolNames(c);
    assert.ok(live.includes('slowstart__echo') && live.includes('slowstart__whoami'), live.join(', '));
    await stop();

    // Same lists again: confirming them changes nothing clients can see.
    c = await start();
    assert.equal((await status(c, 'slowstart')).catalog, 'cached');
    const before = await catalogVersion(c);
    await waitFor(async () => (await status(c, 'slowstart')).catalog === 'live', 'the live lists');
    assert.equal(await catalogVersion(c), before, 'the live lists equal the cached ones: no rebuild was visible');
  });

  it('invalidates only the entry of a definition that changed', async () => {
    writeRegistry(root, {
      'mcp-servers.d/kept.yaml': delayed('kept'),
      'mcp-servers.d/edited.yaml': delayed('edited'),
    });
    let c = await start();
    await waitFor(
      async () => (await status(c, 'kept')).state === 'running' && (await status(c, 'edited')).state === 'running',
      'both servers',
    );
    await stop();
    writeRegistry(root, { 'mcp-servers.d/edited.yaml': delayed('edited', ['--name', 'other']) });
    fs.writeFileSync(delayFile, '4000');
    c = await start();
    assert.equal((await status(c, 'kept')).catalog, 'cached');
    assert.equal((await status(c, 'edited')).catalog, 'none', 'its arguments changed: its old lists say nothing');
    const names = await toolNames(c);
    assert.ok(names.includes('kept__echo') && !names.some((n) => n.startsWith('edited__')), names.join(', '));
    await waitFor(async () => (await toolNames(c)).includes('edited__echo'), 'the edited server to list its tools');
  });

  it('never serves the cache of a server that may not run (unapproved, disabled); ignores a corrupt file', async () => {
    writeRegistry(root, {
      'mcp-servers.d/third.yaml': fixtureServer('third', 'echo.mjs').replace('trust: trusted', 'trust: community'),
      'mcp-servers.d/off.yaml': delayed('off'),
    });
    let c = await start();
    const shown = await status(c, 'third');
    assert.equal(shown.state, 'awaiting-approval');
    await facade(c, 'approve_server', { name: 'third', hash: shown.approvalHash });
    await waitFor(async () => (await status(c, 'off')).catalog === 'live', 'off to run once');
    // Lazy (the community default): it ran once to learn its catalog, and rests on it.
    await waitFor(async () => (await status(c, 'third')).state === 'idle', 'the community server to go idle');
    assert.ok((await toolNames(c)).includes('third__echo'), 'an approved idle server lists its cached tools');
    await facade(c, 'revoke_approval', { name: 'third' });
    assert.ok(!(await toolNames(c)).some((n) => n.startsWith('third__')), 'revoked: its cache is not served');
    await stop();
    assert.ok(JSON.parse(fs.readFileSync(cacheFileIn(home), 'utf8')).servers.third, 'the entry is on disk');

    writeRegistry(root, { 'mcp-servers.d/off.yaml': delayed('off', [], 'enabled: false\n') });
    c = await start();
    const third = await status(c, 'third');
    assert.equal(third.state, 'awaiting-approval');
    assert.equal(third.catalog, 'none');
    assert.equal((await status(c, 'off')).catalog, 'none');
    const names = await toolNames(c);
    assert.ok(!names.some((n) => n.startsWith('third__') || n.startsWith('off__')), names.join(', '));
    const call = await c.callTool({ name: 'third__echo', arguments: { text: 'x' } }).catch((e: Error) => e);
    assert.ok(call instanceof Error || call.isError, 'its cached tools cannot be called');
    await stop();

    fs.writeFileSync(cacheFileIn(home), '{"version": 1, "servers": {"off": {"hash": 7}}');
    writeRegistry(root, { 'mcp-servers.d/off.yaml': delayed('off') });
    c = await start();
    await waitFor(async () => (await status(c, 'off')).state === 'running', 'the broker to run despite the file');
    assert.ok(
      broker!.stderr.some((l) => /catalog cache: ignoring/.test(l)),
      `a log line says the file was ignored:\n${broker!.stderr.join('\n')}`,
    );
  });
});
