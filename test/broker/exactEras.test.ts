// Each party gets only what its era defines (issue 30 items 1 and 6), against a 2026-07-28-only stdio
// server (test/fixtures/exact-v2.mjs --modern-only) through /servers/<name>/mcp: the broker tries a
// 2025-11-25 session on the pipe, is refused and speaks 2026-07-28; a 2025-11-25 caller then gets no
// 2026-only result fields, and its questions are translated; a 2026-07-28 caller that set no log
// level is given none upstream.
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  facade,
  connect,
  fixtureServer,
  removeTempDirs,
  startBrokerProcess,
  tempDir,
  textOf,
  waitFor,
  writeRegistry,
  type BrokerProcess,
} from '../helpers/broker';

type Json = Record<string, unknown>;
const V = '2026-07-28';

describe('exact in the middle: each party gets only what its era defines', function () {
  this.timeout(60_000);
  let broker: BrokerProcess;
  let url: string;
  let v1: Client;

  before(async () => {
    const root = tempDir('sb-exact-eras-');
    writeRegistry(root, { 'mcp-servers.d/modern.yaml': fixtureServer('modern', 'exact-v2.mjs', ['--modern-only']) });
    broker = await startBrokerProcess({ root });
    url = broker.url.replace(/\/mcp$/, '/servers/modern/mcp');
    v1 = new Client({ name: 'v1', version: '1' }, { capabilities: { elicitation: { form: {} } } });
    v1.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Ada' } }));
    await v1.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { Authorization: `Bearer ${broker.token}` } },
      }),
    );
    await waitFor(async () => (await v1.listTools()).tools.length > 0, 'modern listed', 20_000);
  });

  after(async () => {
    await v1?.close().catch(() => undefined);
    await broker?.stop();
    removeTempDirs();
  });

  it('speaks 2026-07-28 to a stdio server that refuses the 2025-11-25 session the broker tries first', async () => {
    const operator = await connect(broker.url, broker.token);
    try {
      const status = await facade(operator, 'server_status', { name: 'modern' });
      assert.equal(status.state, 'running');
      assert.equal(status.protocol, V);
    } finally {
      await operator.close();
    }
  });

  it('sends a 2025-11-25 caller no resultType, cache hints or _meta serverInfo, and translates its questions', async () => {
    const r = (await v1.callTool({ name: 'echo', arguments: { text: 'x' } })) as Json;
    assert.equal(textOf(r), 'echo: x');
    for (const key of ['resultType', 'ttlMs', 'cacheScope']) assert.ok(!(key in r), `${key} reached a 2025 client`);
    assert.ok(!((r._meta as Json | undefined) ?? {})['io.modelcontextprotocol/serverInfo']);
    const read = (await v1.readResource({ uri: 'exact://v2/stdio/note' })) as Json;
    assert.ok(!('ttlMs' in read) && !('resultType' in read));
    // Positive control: the same server's questions still reach this caller, as requests of its era.
    assert.equal(textOf(await v1.callTool({ name: 'ask', arguments: {} })), 'hello Ada');
  });

  it('adds no io.modelcontextprotocol/logLevel upstream for a 2026-07-28 caller that set none', async () => {
    // On a pipe the server's log messages go to the sessions: had the broker asked for a level on the
    // 2026-07-28 call, the v1 session would get that call's messages too.
    const seen: Json[] = [];
    v1.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void seen.push(n.params as Json));
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${broker.token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': V,
        'mcp-method': 'tools/call',
        'mcp-name': 'chatty',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'chatty',
          arguments: {},
          _meta: {
            'io.modelcontextprotocol/protocolVersion': V,
            'io.modelcontextprotocol/clientCapabilities': {},
            'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
          },
        },
      }),
    });
    assert.match(await res.text(), /said it/);
    // Positive control, after it on the same pipe: the session's own call brings its four messages.
    assert.equal(textOf(await v1.callTool({ name: 'chatty', arguments: {} })), 'said it');
    await waitFor(() => seen.some((m) => m.level === 'error'), "the session call's log messages");
    assert.deepEqual(
      seen.map((m) => m.level),
      ['debug', 'info', 'warning', 'error'],
    );
  });
});
