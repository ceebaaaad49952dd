// Security round 2, the router's findings, against a real broker with real SDK clients:
// 6 the per-server endpoint applies the client's tool profile; 7 no client can pass for the
// operator (the name is reserved and the audit log records the operator flag); 8 a client file
// deleted by hand takes its token with it, so re-adding the client does not revive the old token.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  connect,
  fixtureServer,
  removeTempDirs,
  tempDir,
  waitFor,
  writeRegistry,
  type BrokerProcess,
} from '../helpers/broker';
import { RawHttp, facade, filesUnder, noteUpstreams, report, startBroker, type Json } from './lib';

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } },
});

/** The HTTP status an initialize with this token gets (200 when the token counts, 401 when not). */
async function initStatus(broker: BrokerProcess, token: string, urlPath = '/mcp'): Promise<number> {
  return (await new RawHttp(broker.port, token).request({ path: urlPath, body: INIT })).status;
}

describe('faults: security round 2 (router)', function () {
  this.timeout(120_000);
  let root: string;
  let home: string;
  let broker: BrokerProcess;
  let operator: Client;

  const tokenOf = async (name: string): Promise<string> =>
    fs.readFileSync((await facade(operator, 'client_connection', { name })).tokenFile, 'utf8').trim();
  const listedClients = async (): Promise<string[]> =>
    ((await facade(operator, 'list_clients')).clients as Json[]).map((c) => c.name as string);

  before(async () => {
    root = tempDir('sb-fault-secr-');
    home = tempDir('sb-fault-secr-home-');
    writeRegistry(root, {
      'mcp-servers.d/echo.yaml': fixtureServer('echo', 'echo.mjs'),
      'clients.d/profiled.yaml': 'name: profiled\nmcp_allow: [read]\ntools:\n  deny: ["echo__add"]\n',
      'clients.d/narrow.yaml': 'name: narrow\nmcp_allow: [read]\ntools:\n  allow: ["echo__echo"]\n',
      'clients.d/reader.yaml': 'name: reader\nmcp_allow: [read]\n',
      'clients.d/temp.yaml': 'name: temp\nmcp_allow: [read]\n',
      'clients.d/offline.yaml': 'name: offline\nmcp_allow: [read]\n',
    });
    broker = await startBroker({ root, home });
    operator = await connect(broker.url, broker.token, 'operator');
    await waitFor(
      async () => (await facade(operator, 'server_status', { name: 'echo' })).state === 'running',
      'echo running',
      30_000,
    );
    noteUpstreams(broker);
  });

  after(async () => {
    await operator?.close().catch(() => undefined);
    await broker?.stop();
    removeTempDirs();
  });

  it("6: the per-server endpoint applies the client's tool profile (over namespaced names) to list and call", async () => {
    const perServer = broker.url.replace(/\/mcp$/, '/servers/echo/mcp');
    const denied: string[] = [];
    for (const [client, hidden, kept] of [
      ['profiled', 'add', 'echo'],
      ['narrow', 'add', 'echo'],
    ] as const) {
      const c = await connect(perServer, await tokenOf(client), client);
      const names = (await c.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes(kept), `${client} still sees ${kept}: ${names.join(', ')}`);
      assert.ok(!names.includes(hidden), `${client} must not see ${hidden} on /servers/echo/mcp: ${names.join(', ')}`);
      if (client === 'narrow') assert.deepEqual(names, ['echo'], 'an allow list keeps only what it names');
      const err = await c.callTool({ name: hidden, arguments: { a: 1, b: 2 } }).catch((e: Error) => e);
      assert.ok(err instanceof Error, `${client} must not call ${hidden}`);
      assert.match(err.message, /not in client '\w+''s tool profile/);
      denied.push(client);
      await c.close();
    }
    // The same profile on the aggregated endpoint, and a client without one sees everything per server.
    const aggregated = await connect(broker.url, await tokenOf('profiled'), 'profiled');
    assert.ok(!(await aggregated.listTools()).tools.some((t) => t.name === 'echo__add'));
    await aggregated.close();
    const reader = await connect(perServer, await tokenOf('reader'), 'reader');
    assert.ok((await reader.listTools()).tools.some((t) => t.name === 'add'));
    assert.ok(!(await reader.callTool({ name: 'add', arguments: { a: 1, b: 2 } })).isError);
    await reader.close();
    report('router-6', { clients: denied.length, refusedCalls: denied.length });
  });

  it('7: a client named operator is refused by the registry, and audit entries carry the operator flag', async () => {
    writeRegistry(root, { 'clients.d/operator.yaml': 'name: operator\nmcp_allow: [read]\n' });
    const problem = await waitFor(
      async () =>
        ((await facade(operator, 'registry_problems')).problems as Json[]).find((p) =>
          String(p.file).endsWith(path.join('clients.d', 'operator.yaml')),
        ),
      'the problem with clients.d/operator.yaml',
    );
    assert.match(problem.message, /the name 'operator' is reserved for the editor's own identity/);
    assert.ok(!(await listedClients()).includes('operator'), 'the file declares no client');
    const conn = await operator.callTool({ name: 'switchboard__client_connection', arguments: { name: 'operator' } });
    assert.ok(conn.isError, 'no token can be made for it');
    const upsert = await operator.callTool({
      name: 'switchboard__upsert_client',
      arguments: { definition: { name: 'operator' } },
    });
    assert.ok(upsert.isError && /reserved for the editor's own identity/.test(JSON.stringify(upsert.content)));
    fs.unlinkSync(path.join(root, 'clients.d', 'operator.yaml'));

    const reader = await connect(broker.url, await tokenOf('reader'), 'reader');
    await facade(reader, 'list_servers');
    await reader.callTool({ name: 'echo__echo', arguments: { text: 'hi' } });
    await reader.close();
    await facade(operator, 'list_servers');
    const auditFile = filesUnder(home).find((f) => f.endsWith('audit.jsonl'))!;
    const entries = (): Json[] =>
      fs
        .readFileSync(auditFile, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Json);
    await waitFor(
      () => entries().some((e) => e.client === 'reader' && e.tool === 'echo'),
      "the reader's call in the audit log",
    );
    const calls = entries().filter((e) => e.event === 'call' || e.event === 'facade');
    assert.ok(calls.length > 0);
    for (const e of calls)
      assert.equal(typeof e.operator, 'boolean', `entry without the operator flag: ${JSON.stringify(e)}`);
    assert.ok(calls.filter((e) => e.client === 'reader').every((e) => e.operator === false));
    assert.ok(calls.some((e) => e.client === 'operator' && e.operator === true));
    report('router-7', { auditEntries: calls.length });
  });

  it('8: a client file deleted by hand and re-added gets a new token; the old one stays dead', async () => {
    const file = path.join(root, 'clients.d', 'temp.yaml');
    const text = fs.readFileSync(file, 'utf8');
    const old = await tokenOf('temp');
    assert.equal(await initStatus(broker, old), 200);
    fs.unlinkSync(file);
    await waitFor(async () => !(await listedClients()).includes('temp'), 'temp to leave the registry');
    assert.equal(await initStatus(broker, old), 401, "a removed client's token is refused");
    fs.writeFileSync(file, text);
    await waitFor(async () => (await listedClients()).includes('temp'), 'temp to be declared again');
    assert.equal(await initStatus(broker, old), 401, 'the old token must not come back with the client');
    const fresh = await tokenOf('temp');
    assert.notEqual(fresh, old);
    assert.equal(await initStatus(broker, fresh), 200);
    report('router-8', { revived: 0 });
  });

  it('8: the same holds when the file is deleted while the broker is down', async () => {
    const file = path.join(root, 'clients.d', 'offline.yaml');
    const text = fs.readFileSync(file, 'utf8');
    const old = await tokenOf('offline');
    await operator.close();
    await broker.stop();
    fs.unlinkSync(file);
    broker = await startBroker({ root, home });
    operator = await connect(broker.url, broker.token, 'operator');
    fs.writeFileSync(file, text);
    await waitFor(async () => (await listedClients()).includes('offline'), 'offline to be declared again');
    assert.equal(await initStatus(broker, old), 401, 'a token left from before the restart must not revive');
    const fresh = await tokenOf('offline');
    assert.notEqual(fresh, old);
    assert.equal(await initStatus(broker, fresh), 200);
    // A client whose file only fails to parse keeps its token: it is still meant to exist.
    const readerToken = await tokenOf('reader');
    await operator.close();
    await broker.stop();
    fs.writeFileSync(path.join(root, 'clients.d', 'reader.yaml'), 'name: reader\nmcp_allow: [read\n');
    broker = await startBroker({ root, home });
    operator = await connect(broker.url, broker.token, 'operator');
    fs.writeFileSync(path.join(root, 'clients.d', 'reader.yaml'), 'name: reader\nmcp_allow: [read]\n');
    await waitFor(async () => (await listedClients()).includes('reader'), 'reader fixed');
    assert.equal(await initStatus(broker, readerToken), 200);
  });
});
