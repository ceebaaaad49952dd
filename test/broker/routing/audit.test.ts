// read_audit end to end: a real broker, real upstreams and real SDK clients make calls; the entries
// are read back through the facade, and who may read whose entries is checked.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  connect,
  facade,
  fixture,
  fixtureServer,
  removeTempDirs,
  startBrokerProcess,
  tempDir,
  textOf,
  waitFor,
  writeRegistry,
  type BrokerProcess,
} from '../../helpers/broker';

type Json = Record<string, any>;

const CANARY = 'canary-audit-51c0ffee-argument';

describe('audit log read through the facade (read_audit)', function () {
  this.timeout(90_000);
  let root: string;
  let broker: BrokerProcess;
  let operator: Client;
  let reader: Client;
  let writer: Client;

  async function clientFor(name: string): Promise<Client> {
    const conn = await facade(operator, 'client_connection', { name });
    return connect(broker.url, fs.readFileSync(conn.tokenFile, 'utf8').trim(), name);
  }

  /** The JSON-RPC error of a call that must fail. */
  async function failure(client: Client, name: string, args: Json = {}): Promise<{ code: number; message: string }> {
    try {
      const result = await client.callTool({ name, arguments: args });
      assert.fail(`${name} was called: ${textOf(result)}`);
    } catch (err) {
      if (err instanceof assert.AssertionError) throw err;
      return err as { code: number; message: string };
    }
  }

  before(async () => {
    root = tempDir('sb-audit-');
    const rugpull = JSON.stringify(fixture('rugpull.mjs'));
    writeRegistry(root, {
      'mcp-servers.d/echo.yaml': fixtureServer('echo', 'echo.mjs'),
      'mcp-servers.d/notes.yaml': `name: notes\ntrust: trusted\ncommand: ${JSON.stringify(process.execPath)}\nargs: [${rugpull}]\n`,
      'clients.d/reader.yaml': 'name: reader\nmcp_allow: [read]\ntools:\n  deny: ["echo__add"]\n',
      'clients.d/writer.yaml': 'name: writer\nmcp_allow: [read, write]\n',
    });
    broker = await startBrokerProcess({ root });
    operator = await connect(broker.url, broker.token, 'operator');
    await waitFor(
      async () =>
        (await facade(operator, 'list_servers')).servers.filter((s: Json) => s.state === 'running').length === 2,
      'echo and notes running',
      30_000,
    );
    reader = await clientFor('reader');
    writer = await clientFor('writer');
  });

  after(async () => {
    for (const c of [reader, writer, operator]) await c?.close().catch(() => undefined);
    await broker?.stop();
    removeTempDirs();
  });

  it('the operator reads every client’s calls with outcome, latency and error code; never arguments', async () => {
    await reader.callTool({ name: 'echo__echo', arguments: { text: CANARY } });
    const denied = await failure(reader, 'echo__add', { a: 1, b: 2 });
    assert.equal(denied.code, -32003);
    const toolError = await writer.callTool({ name: 'echo__fail', arguments: { message: 'it went wrong' } });
    assert.equal(toolError.isError, true);
    await writer.callTool({ name: 'echo__echo', arguments: { text: 'from the writer' } });

    const tail = await facade(operator, 'read_audit', { limit: 50 });
    assert.equal(tail.scope, 'all');
    assert.ok(tail.file.endsWith('audit.jsonl'), tail.file);
    const entries: Json[] = tail.entries;
    const times = entries.map((e) => Date.parse(e.at));
    assert.deepEqual(
      times,
      [...times].sort((a, b) => a - b),
      'oldest first',
    );
    const ok = entries.find((e) => e.client === 'reader' && e.event === 'call' && e.tool === 'echo');
    assert.ok(ok, JSON.stringify(entries));
    assert.equal(ok.server, 'echo');
    assert.equal(ok.outcome, 'ok');
    assert.equal(typeof ok.ms, 'number');
    const refused = entries.find((e) => e.client === 'reader' && e.tool === 'add');
    assert.equal(refused?.outcome, 'error');
    assert.equal(refused?.code, -32003, JSON.stringify(refused));
    assert.match(refused?.error, /tool profile/);
    const failed = entries.find((e) => e.client === 'writer' && e.tool === 'fail');
    assert.equal(failed?.outcome, 'ok');
    assert.equal(failed?.isError, true, JSON.stringify(failed));
    // Registry events (no client) are the operator's to see as well.
    assert.ok(entries.some((e) => e.event === 'registry'));
    assert.ok(!JSON.stringify(tail).includes(CANARY), 'an argument reached the audit');

    const onlyWriter = await facade(operator, 'read_audit', { client: 'writer' });
    assert.ok(onlyWriter.entries.length >= 2);
    assert.ok(onlyWriter.entries.every((e: Json) => e.client === 'writer'));
    // limit keeps the newest.
    const last = await facade(operator, 'read_audit', { limit: 1 });
    assert.equal(last.entries.length, 1);
    assert.ok(Date.parse(last.entries[0].at) >= Date.parse(entries.at(-1)!.at), JSON.stringify(last.entries));
  });

  it('a read-scoped client reads only its own calls, and is refused another client’s', async () => {
    const own = await facade(reader, 'read_audit', { limit: 1000 });
    assert.equal(own.scope, 'own');
    assert.equal(own.file, undefined, 'the file path is the operator’s');
    assert.ok(own.entries.length >= 2, JSON.stringify(own.entries));
    assert.ok(
      own.entries.every((e: Json) => e.client === 'reader' && e.operator !== true),
      JSON.stringify(own.entries),
    );
    assert.ok(!own.entries.some((e: Json) => e.event === 'registry' || e.event === 'rejected'));
    const result = await reader.callTool({ name: 'switchboard__read_audit', arguments: { client: 'writer' } });
    assert.equal(result.isError, true);
    assert.match(textOf(result), /only its own audit entries/);
    // The writer sees its own, never the reader's.
    const writers = await facade(writer, 'read_audit', {});
    assert.ok(writers.entries.length > 0 && writers.entries.every((e: Json) => e.client === 'writer'));
    // Bad input is a clear error.
    const bad = await operator.callTool({ name: 'switchboard__read_audit', arguments: { limit: 0 } });
    assert.equal(bad.isError, true);
    assert.match(textOf(bad), /'limit' must be a whole number from 1 to 1000/);
  });

  it('the operator’s call of a quarantined tool fails with the broker’s message and is audited as refused', async () => {
    await waitFor(async () => {
      const s = await facade(operator, 'server_status', { name: 'notes' });
      return s.pins?.status === 'pinned';
    }, 'notes pinned');
    await operator.callTool({ name: 'notes__rug_pull', arguments: { variant: 'description' } });
    await waitFor(
      async () => (await facade(operator, 'server_status', { name: 'notes' })).pins.quarantined.includes('read_notes'),
      'read_notes quarantined',
    );
    const err = await failure(operator, 'notes__read_notes');
    assert.equal(err.code, -32003);
    assert.match(err.message, /'read_notes' of server 'notes' is quarantined/);
    const tail = await facade(operator, 'read_audit', { limit: 20 });
    const entry = tail.entries.findLast((e: Json) => e.tool === 'read_notes');
    assert.ok(entry, JSON.stringify(tail.entries));
    assert.equal(entry.operator, true);
    assert.equal(entry.outcome, 'error');
    assert.equal(entry.code, -32003);
  });
});
