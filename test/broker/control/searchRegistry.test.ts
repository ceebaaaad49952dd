// switchboard__search_registry through a real broker, called by real SDK clients: a read-scope agent
// finds a server in the configured registry (the loopback fixture), takes the definition it offers,
// and a write-scope agent proposes it with upsert_server, where it stays community until approved.
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import * as fs from 'node:fs';
import {
  connect,
  facade,
  killStarted,
  removeTempDirs,
  startBrokerProcess,
  tempDir,
  textOf,
  writeRegistry,
  type BrokerProcess,
} from '../../helpers/broker';
import { startRegistry, type RegistryFixture } from '../../helpers/registryFixture';

describe('facade: search_registry (SDK clients, loopback registry)', function () {
  this.timeout(60_000);
  let reg: RegistryFixture;
  let broker: BrokerProcess;
  let operator: Client;
  const open: Client[] = [];

  before(async () => {
    reg = await startRegistry(['--page-size', '2']);
    const root = tempDir('sb-root-');
    writeRegistry(root, {
      'mcp-servers.d/.keep': '',
      'clients.d/reader.yaml': 'name: reader\nmcp_allow: [read]\n',
      'clients.d/writer.yaml': 'name: writer\nmcp_allow: [read, write]\n',
      'clients.d/nobody.yaml': 'name: nobody\nmcp_allow: []\n',
    });
    broker = await startBrokerProcess({ root, env: { SWITCHBOARD_REGISTRIES: reg.url } });
    operator = await connect(broker.url, broker.token, 'operator');
  });
  after(async () => {
    for (const c of open) await c.close().catch(() => undefined);
    await operator?.close().catch(() => undefined);
    await broker?.stop();
    await killStarted();
    removeTempDirs();
  });

  async function agent(name: string): Promise<Client> {
    const { tokenFile } = await facade(operator, 'client_connection', { name });
    const c = await connect(broker.url, fs.readFileSync(tokenFile, 'utf8').trim(), name);
    open.push(c);
    return c;
  }

  it('a read-scope agent searches, pages and reads one line per server', async () => {
    const reader = await agent('reader');
    const tools = (await reader.listTools()).tools.map((t) => t.name);
    assert.ok(tools.includes('switchboard__search_registry'));
    const first = await facade(reader, 'search_registry', { query: 'example', limit: 2 });
    assert.equal(first.servers.length, 2);
    assert.ok(first.nextCursor);
    const second = await facade(reader, 'search_registry', { query: 'example', limit: 2, cursor: first.nextCursor });
    assert.notDeepEqual(
      second.servers.map((s: { name: string }) => s.name),
      first.servers.map((s: { name: string }) => s.name),
    );
    const result = await reader.callTool({ name: 'switchboard__search_registry', arguments: { query: 'weather' } });
    assert.match(
      textOf(result),
      /^io\.github\.example-org\/weather@1\.4\.2 \[stdio; pypi weather-mcp-server; needs secrets\]: Weather forecasts/,
    );
  });

  it('needs the read scope', async () => {
    const nobody = await agent('nobody');
    const r = await nobody
      .callTool({ name: 'switchboard__search_registry', arguments: { query: 'x' } })
      .catch((e: Error) => e);
    const text = r instanceof Error ? r.message : textOf(r);
    assert.match(text, /needs the 'read' scope/);
  });

  it('asks only the configured registries, never one an agent names', async () => {
    const elsewhere = await startRegistry();
    const reader = await agent('reader');
    const before = (await reg.requests()).length;
    await reader
      .callTool({ name: 'switchboard__search_registry', arguments: { query: 'time', registry: elsewhere.url } })
      .catch((e: Error) => e);
    assert.deepEqual(await elsewhere.requests(), [], 'the named registry was never asked');
    assert.ok((await reg.requests()).length > before, 'positive control: the configured one was');
    await elsewhere.stop();
  });

  it('with a name it offers the definition; a write-scope agent proposes it and it stays community', async () => {
    const writer = await agent('writer');
    const found = await facade(writer, 'search_registry', { name: 'io.github.example-org/time@1.0.0' });
    assert.equal(found.servers[0].version, '1.0.0');
    assert.deepEqual(found.definition.args, ['-y', '@example-org/time-mcp@1.0.0']);
    const added = await facade(writer, 'upsert_server', { definition: { ...found.definition, trust: 'trusted' } });
    assert.equal(added.status.trust, 'community');
    assert.equal(added.status.state, 'awaiting-approval');

    const several = await facade(writer, 'search_registry', { name: 'io.github.example-org/weather' });
    assert.ok(several.definition, 'one package: a definition');
    assert.match(several.notes.join('\n'), /OPENWEATHER_API_KEY/);
    const bad = await writer
      .callTool({ name: 'switchboard__search_registry', arguments: { name: 'io.evil/../../admin' } })
      .catch((e: Error) => e);
    assert.match(bad instanceof Error ? bad.message : textOf(bad), /is not a registry server name/);
  });
});
