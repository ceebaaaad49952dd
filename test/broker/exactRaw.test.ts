// Beside the exact-middle matrix (exactMiddle.test.ts), what its SDK clients hide, checked raw on
// the wire between two 2026-07-28 parties, direct and through both endpoints: input_required and
// requestState passed through verbatim, the caller's own capabilities upstream, cache hints, and
// Mcp-Param-* headers (checked by the broker, mirrored upstream, sent by `switchboard connect`).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';
import {
  BROKER_JS,
  connect,
  removeTempDirs,
  startBrokerProcess,
  startHttpFixture,
  tempDir,
  waitFor,
  writeRegistry,
  type BrokerProcess,
} from '../helpers/broker';
import { normalize, text, v2Driver, V, type Json } from '../helpers/exactDrivers';

/** One raw 2026-07-28 POST (headers as the revision mirrors them); its JSON-RPC answer, id aside. */
async function post2026(
  url: string,
  token: string | undefined,
  method: string,
  params: Json,
  more: Record<string, string> = {},
): Promise<unknown> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': V,
      'mcp-method': method,
      'mcp-name': String(params.name ?? params.uri),
      ...more,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const text = await res.text();
  const messages = (res.headers.get('content-type') ?? '').includes('text/event-stream')
    ? text
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => JSON.parse(l.slice(6)) as Json)
    : [JSON.parse(text) as Json];
  const { id: _id, ...answer } = messages[messages.length - 1];
  return normalize({ status: res.status, ...answer });
}

describe('exact in the middle: input_required between two 2026-07-28 parties, raw (both endpoints)', function () {
  this.timeout(60_000);
  let broker: BrokerProcess;
  let upstream: { url: string; stop(): Promise<void> };
  let through: string;

  before(async () => {
    upstream = await startHttpFixture('exact-v2.mjs');
    const root = tempDir('sb-exact-raw-');
    writeRegistry(root, {
      'mcp-servers.d/v2h.yaml': `name: v2h\ntrust: trusted\ntransport: http\nurl: ${upstream.url}\n`,
      // A client whose tool profile narrows the list: what it is listed is its own.
      'clients.d/narrow.yaml': 'name: narrow\ntools:\n  deny: ["v2h__echo"]\n',
    });
    broker = await startBrokerProcess({ root });
    through = broker.url.replace(/\/mcp$/, '/servers/v2h/mcp');
    const v2 = await v2Driver({ url: through }, broker.token);
    await waitFor(async () => (await v2.listTools()).length > 0, 'v2h listed through the broker', 20_000);
    await v2.close();
  });

  after(async () => {
    await broker?.stop();
    await upstream?.stop();
    removeTempDirs();
  });

  const envelope = (capabilities: Json): Json => ({
    'io.modelcontextprotocol/protocolVersion': V,
    'io.modelcontextprotocol/clientCapabilities': capabilities,
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  });
  /**
   * The same request direct, through /servers/v2h/mcp and through /mcp (the tool's name prefixed
   * there, nothing else): all three answers, asserted equal.
   */
  const both = async (params: Json, more: Record<string, string> = {}): Promise<Json> => {
    const direct = await post2026(upstream.url, undefined, 'tools/call', params, more);
    const via = await post2026(through, broker.token, 'tools/call', params, more);
    assert.deepEqual(via, direct, '/servers/v2h/mcp');
    const named = { ...params, name: `v2h__${String(params.name)}` };
    const all = await post2026(broker.url, broker.token, 'tools/call', named, more);
    assert.deepEqual(all, direct, '/mcp');
    return direct as Json;
  };

  it('passes inputRequests (the server keys, every question at once) and requestState through verbatim', async () => {
    const caps = envelope({ elicitation: { form: {} } });
    const multi = await both({ name: 'multi', arguments: {}, _meta: caps });
    const asked = (multi.result as Json).inputRequests as Json;
    assert.deepEqual(Object.keys(asked).sort(), ['colour', 'user_name']);
    const first = await both({ name: 'rounds', arguments: {}, _meta: caps });
    assert.equal((first.result as Json).requestState, 'round-1');
    const inputResponses = { user_name: { action: 'accept', content: { name: 'Ada' } } };
    const second = await both({ name: 'rounds', arguments: {}, _meta: caps, inputResponses, requestState: 'round-1' });
    assert.equal((second.result as Json).requestState, 'round-2:Ada');
    const colour = { colour: { action: 'accept', content: { colour: 'teal' } } };
    const done = await both({
      name: 'rounds',
      arguments: {},
      _meta: caps,
      inputResponses: colour,
      requestState: 'round-2:Ada',
    });
    assert.deepEqual((done.result as Json).content, [{ type: 'text', text: 'Ada likes teal' }]);
  });

  it("sends the caller's own clientCapabilities upstream (a caller without elicitation is refused by the server)", async () => {
    const refused = await both({ name: 'ask', arguments: {}, _meta: envelope({}) });
    assert.ok(refused.error, JSON.stringify(refused));
    const control = await both({ name: 'ask', arguments: {}, _meta: envelope({ elicitation: { form: {} } }) });
    assert.equal((control.result as Json).resultType, 'input_required');
  });

  it("passes the server's cache hints through on /servers/<name>/mcp (lists and reads); /mcp's lists are its own", async () => {
    const raw = (url: string, token: string | undefined, method: string, params: Json) =>
      post2026(url, token, method, { ...params, _meta: envelope({}) }) as Promise<Json>;
    const hints = (r: Json): Json => {
      const { ttlMs, cacheScope } = r.result as Json;
      return { ttlMs, cacheScope };
    };
    for (const method of ['tools/list', 'prompts/list', 'resources/list']) {
      const direct = hints(await raw(upstream.url, undefined, method, {}));
      assert.deepEqual(direct, { ttlMs: 60_000, cacheScope: 'public' }, method);
      assert.deepEqual(hints(await raw(through, broker.token, method, {})), direct, method);
      // /mcp merges every server and the broker's own tools: stale at once, for this caller.
      assert.deepEqual(hints(await raw(broker.url, broker.token, method, {})), { ttlMs: 0, cacheScope: 'private' });
    }
    const uri = 'exact://v2/http/note';
    const read = hints(await raw(upstream.url, undefined, 'resources/read', { uri }));
    assert.deepEqual(read, { ttlMs: 30_000, cacheScope: 'public' });
    assert.deepEqual(hints(await raw(through, broker.token, 'resources/read', { uri })), read);
    assert.deepEqual(hints(await raw(broker.url, broker.token, 'resources/read', { uri })), read);
    // The broker's own state changes at any moment and depends on the token: stale at once, private.
    const state = await raw(broker.url, broker.token, 'resources/read', { uri: 'switchboard://state' });
    assert.ok(((state.result as Json).contents as Json[]).length > 0, JSON.stringify(state));
    assert.deepEqual(hints(state), { ttlMs: 0, cacheScope: 'private' });
    // A caller whose tool profile narrows the tool list may not share its cache with anyone.
    const operator = await connect(broker.url, broker.token, 'operator');
    const made = await operator.callTool({ name: 'switchboard__client_connection', arguments: { name: 'narrow' } });
    await operator.close();
    const narrow = fs.readFileSync((made.structuredContent as Json).tokenFile as string, 'utf8').trim();
    const listed = await raw(through, narrow, 'tools/list', {});
    assert.ok(!((listed.result as Json).tools as Json[]).some((t) => t.name === 'echo'), 'the profile narrows it');
    assert.deepEqual(hints(listed), { ttlMs: 60_000, cacheScope: 'private' });
  });

  it('checks and forwards Mcp-Param-* headers as the server does (x-mcp-header)', async () => {
    const params = { name: 'region', arguments: { region: 'eu-west' }, _meta: envelope({}) };
    // Without the header the server refuses (400, -32020); through the broker the same.
    const missing = await both(params);
    assert.equal(missing.status, 400);
    assert.equal((missing.error as Json).code, -32020);
    // Positive control: with it, the broker forwards it (else the server would refuse the broker).
    const ok = await both(params, { 'mcp-param-region': 'eu-west' });
    assert.deepEqual((ok.result as Json).content, [{ type: 'text', text: 'region: eu-west' }]);
  });

  it("`switchboard connect` sends a tool's Mcp-Param-* headers as an HTTP client would", async () => {
    const transport = new StdioV2({
      command: process.execPath,
      args: [BROKER_JS, 'connect', '--root', broker.root, '--client', 'narrow', '--no-start'],
      env: { ...process.env, SWITCHBOARD_HOME: broker.home } as Record<string, string>,
      stderr: 'ignore',
    });
    const client = new ClientV2({ name: 'stdio-v2', version: '1' }, { versionNegotiation: { mode: { pin: V } } });
    await client.connect(transport);
    try {
      const call = async (): Promise<string> =>
        text((await client.callTool({ name: 'v2h__region', arguments: { region: 'eu-west' } })) as unknown as Json);
      // Without a listing first (the bridge lists the tools itself to learn the declaration), then after one.
      assert.equal(await call(), 'region: eu-west');
      assert.ok((await client.listTools()).tools.some((t) => t.name === 'v2h__region'));
      assert.equal(await call(), 'region: eu-west');
      // Positive control: a tool without x-mcp-header arguments goes as before.
      assert.equal(
        text((await client.callTool({ name: 'v2h__broken', arguments: {} })) as unknown as Json),
        'it broke',
      );
    } finally {
      await client.close();
    }
  });
});
