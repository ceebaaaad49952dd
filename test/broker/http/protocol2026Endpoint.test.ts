// The 2026-07-28 revision on the broker's endpoint: an SDK v2 client in 2026-07-28 mode (discover,
// lists, calls, progress, cancellation, input_required, subscriptions) next to an SDK v1 session
// client on the same URL, and the revision's error paths over raw HTTP.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioTransportV2 } from '@modelcontextprotocol/client/stdio';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  BROKER_JS,
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
import { connectV2, elicitingV1, elicitingV2, waitForTools } from '../../helpers/eraCallers';

type Json = Record<string, unknown>;
const V = '2026-07-28';

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function raw(port: number, opts: { method?: string; path?: string; headers: Json; body?: string }): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: opts.method ?? 'POST',
        path: opts.path ?? '/mcp',
        // An undefined value leaves that header out (the error cases drop required ones).
        headers: Object.fromEntries(Object.entries(opts.headers).filter(([, v]) => v !== undefined)) as never,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

const envelope = (version = V, capabilities: Json = {}): Json => ({
  'io.modelcontextprotocol/protocolVersion': version,
  'io.modelcontextprotocol/clientCapabilities': capabilities,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
});

describe('the 2026-07-28 revision on the endpoint', function () {
  this.timeout(60_000);
  let broker: BrokerProcess;
  let base: Json;

  /** A raw 2026-07-28 POST with correct headers unless `headers` overrides them. */
  function post(message: Json, headers: Json = {}, pathname = '/mcp'): Promise<Reply> {
    const params = (message.params ?? {}) as Json;
    const named = params.name ?? params.uri;
    return raw(broker.port, {
      path: pathname,
      headers: {
        ...base,
        'mcp-protocol-version': V,
        'mcp-method': message.method,
        ...(typeof named === 'string' ? { 'mcp-name': named } : {}),
        ...headers,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, ...message }),
    });
  }

  const errorOf = (r: Reply): { code: number; message: string; data?: Json } => JSON.parse(r.body).error;

  before(async () => {
    const root = tempDir('sb-proto-');
    writeRegistry(root, {
      'mcp-servers.d/echo.yaml': fixtureServer('echo', 'echo.mjs'),
      'mcp-servers.d/slow.yaml': fixtureServer('slow', 'slow.mjs'),
      'mcp-servers.d/asks.yaml': fixtureServer('asks', 'asks-client.mjs'),
      'clients.d/reader.yaml': 'name: reader\nmcp_allow: [read]\ntools:\n  deny: ["echo__add"]\n',
    });
    broker = await startBrokerProcess({ root });
    base = {
      host: `127.0.0.1:${broker.port}`,
      authorization: `Bearer ${broker.token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };
    const v1 = await connect(broker.url, broker.token);
    // Every upstream running, not only listed: a call to one still starting is refused, not queued.
    await waitFor(async () => {
      const r = await v1.callTool({ name: 'switchboard__list_servers', arguments: {} });
      const servers = (r.structuredContent as { servers: { state: string }[] }).servers;
      return servers.length === 3 && servers.every((x) => x.state === 'running');
    }, 'the upstreams');
    await v1.close();
  });

  after(async () => {
    await broker?.stop();
    removeTempDirs();
  });

  it('answers server/discover statelessly with the versions, capabilities and server info', async () => {
    const r = await post({ method: 'server/discover', params: { _meta: envelope() } });
    assert.equal(r.status, 200);
    assert.equal(r.headers['mcp-session-id'], undefined, 'no session is minted');
    const result = JSON.parse(r.body).result as Json;
    assert.equal(result.resultType, 'complete');
    assert.deepEqual((result.supportedVersions as string[]).slice(0, 2), [V, '2025-11-25']);
    assert.deepEqual(Object.keys(result.capabilities as Json).sort(), ['completions', 'prompts', 'resources', 'tools']);
    assert.equal(((result._meta as Json)['io.modelcontextprotocol/serverInfo'] as Json).name, 'mcp-switchboard');
    const one = await post({ method: 'server/discover', params: { _meta: envelope() } }, {}, '/servers/echo/mcp');
    const info = (JSON.parse(one.body).result._meta as Json)['io.modelcontextprotocol/serverInfo'] as Json;
    assert.equal(info.name, 'switchboard/echo');
  });

  it('serves an SDK v2 client in 2026-07-28 mode: lists, calls, progress and an SDK v1 session alongside', async () => {
    const v1: Client = await connect(broker.url, broker.token, 'v1-client');
    const v2 = await connectV2(broker.url, broker.token);
    try {
      assert.equal(v2.getNegotiatedProtocolVersion(), V);
      const tools = (await v2.listTools()).tools.map((t) => t.name);
      assert.ok(tools.includes('echo__echo') && tools.includes('switchboard__list_servers'));
      const [a, b] = await Promise.all([
        v2.callTool({ name: 'echo__echo', arguments: { text: 'new era' } }),
        v1.callTool({ name: 'echo__echo', arguments: { text: 'old era' } }),
      ]);
      assert.equal(textOf(a), 'echo: new era');
      assert.deepEqual(a.structuredContent, { text: 'new era' });
      assert.equal(textOf(b), 'echo: old era');
      const progress: number[] = [];
      const slow = await v2.callTool(
        { name: 'slow__slow', arguments: { steps: 3, delayMs: 100 } },
        { onprogress: (p) => progress.push(p.progress) },
      );
      assert.equal(textOf(slow), 'done 3 steps');
      // A client may drop the last progress, sent back to back with the result (test/fixtures/README.md).
      assert.deepEqual(progress.slice(0, 2), [1, 2]);
      const failed = await v2.callTool({ name: 'echo__fail', arguments: { message: 'boom' } });
      assert.equal(failed.isError, true);
      await assert.rejects(v2.callTool({ name: 'echo__nope', arguments: {} }), /Unknown tool 'echo__nope'/);
      assert.ok((await v1.listTools()).tools.length === tools.length, 'both eras see the same catalog');
    } finally {
      await v1.close();
      await v2.close();
    }
  });

  it("serves the per-server endpoint to a v2 client under the server's own names", async () => {
    const v2 = await connectV2(broker.url.replace(/\/mcp$/, '/servers/echo/mcp'), broker.token);
    try {
      const names = (await v2.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes('echo') && !names.includes('echo__echo'));
      assert.equal(textOf(await v2.callTool({ name: 'add', arguments: { a: 2, b: 3 } })), '5');
    } finally {
      await v2.close();
    }
  });

  it('cancels the upstream call when a v2 client aborts (the response stream closes)', async () => {
    const v2 = await connectV2(broker.url, broker.token);
    try {
      const count = async (): Promise<number> =>
        Number(textOf(await v2.callTool({ name: 'slow__cancelled', arguments: {} })));
      const before = await count();
      const controller = new AbortController();
      const call = v2.callTool({ name: 'slow__hang', arguments: {} }, { signal: controller.signal });
      await new Promise((r) => setTimeout(r, 300));
      controller.abort();
      await assert.rejects(call);
      await waitFor(async () => (await count()) === before + 1, 'the upstream to see the cancellation');
    } finally {
      await v2.close();
    }
  });

  it("turns an old-era upstream's elicitation and sampling into input_required; the retry completes it", async () => {
    const v2 = await connectV2(broker.url, broker.token, { elicitation: { form: {} }, sampling: {} });
    const asked: string[] = [];
    v2.setRequestHandler('elicitation/create', async (req) => {
      asked.push(req.params.message);
      return { action: 'accept', content: { answer: '42' } };
    });
    v2.setRequestHandler('sampling/createMessage', async () => ({
      role: 'assistant',
      content: { type: 'text', text: 'sampled' },
      model: 'test-model',
    }));
    try {
      const elicited = await v2.callTool({ name: 'asks__elicit', arguments: { message: 'Which answer?' } });
      assert.deepEqual(JSON.parse(textOf(elicited)), { action: 'accept', content: { answer: '42' } });
      assert.deepEqual(asked, ['Which answer?']);
      const sampled = await v2.callTool({ name: 'asks__sample', arguments: { prompt: 'hi' } });
      assert.equal(JSON.parse(textOf(sampled)).content.text, 'sampled');
    } finally {
      await v2.close();
    }
  });

  it('shows input_required on the wire, keeps it to the caller that got it, and completes on retry', async () => {
    const call = { method: 'tools/call', params: { name: 'asks__elicit', arguments: { message: 'Raw?' } } };
    const caps = { elicitation: { form: {} } };
    const first = await post({ ...call, params: { ...call.params, _meta: envelope(V, caps) } });
    assert.equal(first.status, 200);
    const interim = JSON.parse(first.body).result as Json;
    assert.equal(interim.resultType, 'input_required');
    const [key, request] = Object.entries(interim.inputRequests as Json)[0] as [string, Json];
    assert.equal(request.method, 'elicitation/create');
    assert.equal((request.params as Json).message, 'Raw?');
    const reader = await readerToken();
    const stolen = await post(
      { ...call, params: { ...call.params, _meta: envelope(V, caps), requestState: interim.requestState } },
      { authorization: `Bearer ${reader}` },
    );
    assert.match(errorOf(stolen).message, /requestState belongs to another request/);
    const retry = await post({
      ...call,
      id: 8,
      params: {
        ...call.params,
        _meta: envelope(V, caps),
        requestState: interim.requestState,
        inputResponses: { [key]: { action: 'accept', content: { answer: 'yes' } } },
      },
    });
    const done = JSON.parse(retry.body).result as Json;
    assert.equal(done.resultType, 'complete');
    assert.deepEqual(JSON.parse(textOf(done)), { action: 'accept', content: { answer: 'yes' } });
    const again = await post({ ...call, params: { ...call.params, _meta: envelope(V, caps), requestState: 'x' } });
    assert.match(errorOf(again).message, /unknown or expired/);
  });

  it('fails with MissingRequiredClientCapability when the upstream asks what the caller did not declare', async () => {
    const r = await post({
      method: 'tools/call',
      params: { name: 'asks__elicit', arguments: { message: 'q' }, _meta: envelope(V, {}) },
    });
    assert.equal(r.status, 400);
    const error = errorOf(r);
    assert.equal(error.code, -32021);
    // A ClientCapabilities object, as the revision defines it (issue 30 item 3).
    assert.deepEqual(error.data, { requiredCapabilities: { elicitation: { form: {} } } });
  });

  it("applies the client's token, scope and tool profile per request, and audits the call", async () => {
    const reader = await readerToken();
    const asReader = { authorization: `Bearer ${reader}` };
    const list = await post({ method: 'tools/list', params: { _meta: envelope() } }, asReader);
    const names = (JSON.parse(list.body).result.tools as Json[]).map((t) => t.name);
    assert.ok(names.includes('echo__echo') && !names.includes('echo__add'), 'the tool profile narrows the list');
    const denied = await post(
      { method: 'tools/call', params: { name: 'echo__add', arguments: { a: 1, b: 2 }, _meta: envelope() } },
      { authorization: `Bearer ${reader}` },
    );
    assert.match(errorOf(denied).message, /not in client 'reader''s tool profile/);
    const write = await post(
      {
        method: 'tools/call',
        params: { name: 'switchboard__restart_server', arguments: { name: 'echo' }, _meta: envelope() },
      },
      { authorization: `Bearer ${reader}` },
    );
    const result = JSON.parse(write.body);
    assert.ok(result.error || result.result.isError, 'a read-scoped client cannot restart a server');
    const ok = await post(
      { method: 'tools/call', params: { name: 'echo__echo', arguments: { text: 'audited' }, _meta: envelope() } },
      { authorization: `Bearer ${reader}` },
    );
    assert.equal(textOf(JSON.parse(ok.body).result), 'echo: audited');
    const unauth = await post({ method: 'tools/list', params: { _meta: envelope() } }, { authorization: 'Bearer x' });
    assert.equal(unauth.status, 401);
    const auditFile = path.join(broker.home, ...findAudit(broker.home));
    await waitFor(
      () =>
        fs
          .readFileSync(auditFile, 'utf8')
          .split('\n')
          .some((l) => l.includes('"client":"reader"') && l.includes('"tool":"echo"') && l.includes('"event":"call"')),
      'the audit entry of the stateless call',
    );
  });

  it('delivers list changes on subscriptions/listen, tagged with the subscription id', async () => {
    const r = await new Promise<{ status: number; events: Json[]; close(): void }>((resolve, reject) => {
      const events: Json[] = [];
      const req = http.request(
        {
          host: '127.0.0.1',
          port: broker.port,
          method: 'POST',
          path: '/mcp',
          headers: { ...base, 'mcp-protocol-version': V, 'mcp-method': 'subscriptions/listen' } as never,
        },
        (res) => {
          let buffer = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            buffer += chunk;
            for (let i = buffer.indexOf('\n\n'); i >= 0; i = buffer.indexOf('\n\n')) {
              const data = buffer
                .slice(0, i)
                .split('\n')
                .find((l) => l.startsWith('data: '));
              buffer = buffer.slice(i + 2);
              if (data) events.push(JSON.parse(data.slice(6)));
            }
          });
          resolve({ status: res.statusCode ?? 0, events, close: () => req.destroy() });
        },
      );
      req.on('error', () => undefined);
      req.once('error', reject);
      req.end(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 'listen-1',
          method: 'subscriptions/listen',
          params: { _meta: envelope(), notifications: { toolsListChanged: true, promptsListChanged: false } },
        }),
      );
    });
    try {
      assert.equal(r.status, 200);
      const ack = await waitFor(() => r.events[0], 'the acknowledgment');
      assert.equal(ack.method, 'notifications/subscriptions/acknowledged');
      assert.deepEqual((ack.params as Json).notifications, { toolsListChanged: true });
      assert.equal(((ack.params as Json)._meta as Json)['io.modelcontextprotocol/subscriptionId'], 'listen-1');
      writeRegistry(broker.root, { 'mcp-servers.d/echo2.yaml': fixtureServer('echo2', 'echo.mjs') });
      const changed = await waitFor(
        () => r.events.find((e) => e.method === 'notifications/tools/list_changed'),
        'tools/list_changed on the listen stream',
        20_000,
      );
      assert.equal(((changed.params as Json)._meta as Json)['io.modelcontextprotocol/subscriptionId'], 'listen-1');
      assert.ok(!r.events.some((e) => e.method === 'notifications/prompts/list_changed'), 'only what was asked for');
    } finally {
      r.close();
    }
  });

  it('bridges a 2026-07-28 stdio client through `switchboard connect`: discover, list, call, progress', async () => {
    const transport = new StdioTransportV2({
      command: process.execPath,
      args: [BROKER_JS, 'connect', '--root', broker.root, '--client', 'reader', '--no-start'],
      env: { ...process.env, SWITCHBOARD_HOME: broker.home } as Record<string, string>,
      stderr: 'pipe',
    });
    const client = new ClientV2({ name: 'stdio-v2', version: '1' }, { versionNegotiation: { mode: { pin: V } } });
    await client.connect(transport);
    try {
      assert.equal(client.getNegotiatedProtocolVersion(), V);
      const names = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes('echo__echo') && !names.includes('echo__add'), "the reader's profile applies");
      assert.equal(textOf(await client.callTool({ name: 'echo__echo', arguments: { text: 'piped' } })), 'echo: piped');
      const progress: number[] = [];
      const slow = await client.callTool(
        { name: 'slow__slow', arguments: { steps: 2, delayMs: 100 } },
        { onprogress: (p) => progress.push(p.progress) },
      );
      assert.equal(textOf(slow), 'done 2 steps');
      // A client may drop a progress that reaches it in the same read as the result (test/fixtures/README.md):
      // the steps are 100 ms apart so that the first one, at least, arrives on its own even on a busy machine.
      assert.deepEqual(progress.slice(0, 1), [1]);
    } finally {
      await client.close();
    }
  });

  describe('error paths over raw HTTP', () => {
    it('missing _meta: 400 with Invalid params (-32602)', async () => {
      const r = await post({ method: 'tools/list', params: {} });
      assert.equal(r.status, 400);
      assert.equal(errorOf(r).code, -32602);
      assert.match(errorOf(r).message, /io\.modelcontextprotocol\/protocolVersion/);
      const noCaps = await post({
        method: 'tools/list',
        params: { _meta: { 'io.modelcontextprotocol/protocolVersion': V } },
      });
      assert.equal(noCaps.status, 400);
      assert.match(errorOf(noCaps).message, /clientCapabilities/);
    });

    it('unsupported version: 400 UnsupportedProtocolVersion (-32022) listing the supported ones', async () => {
      const r = await post(
        { method: 'server/discover', params: { _meta: envelope('2099-01-01') } },
        { 'mcp-protocol-version': '2099-01-01' },
      );
      assert.equal(r.status, 400);
      const error = errorOf(r);
      assert.equal(error.code, -32022);
      assert.notEqual(JSON.parse(r.body).id, null, "the error names the request's id (the body is read first)");
      assert.equal((error.data as Json).requested, '2099-01-01');
      assert.ok(((error.data as Json).supported as string[]).includes(V));
      assert.ok(((error.data as Json).supported as string[]).includes('2025-11-25'));
    });

    it('header mismatch: version, method or name header missing or not matching the body (-32020)', async () => {
      const discover = { method: 'server/discover', params: { _meta: envelope() } };
      const cases: [string, Reply][] = [
        ['version header missing', await post(discover, { 'mcp-protocol-version': undefined as never })],
        ['version header differs', await post(discover, { 'mcp-protocol-version': '2025-11-25' })],
        ['method header missing', await post(discover, { 'mcp-method': undefined as never })],
        ['method header differs', await post(discover, { 'mcp-method': 'tools/list' })],
        [
          'name header differs',
          await post(
            { method: 'tools/call', params: { name: 'echo__echo', arguments: { text: 'x' }, _meta: envelope() } },
            { 'mcp-name': 'echo__add' },
          ),
        ],
        [
          'name header missing',
          await post(
            { method: 'tools/call', params: { name: 'echo__echo', arguments: { text: 'x' }, _meta: envelope() } },
            { 'mcp-name': undefined as never },
          ),
        ],
      ];
      for (const [what, r] of cases) {
        assert.equal(r.status, 400, what);
        assert.equal(errorOf(r).code, -32020, what);
        assert.match(errorOf(r).message, /^Header mismatch/, what);
      }
      const encoded = await post(
        { method: 'tools/call', params: { name: 'echo__echo', arguments: { text: 'b64' }, _meta: envelope() } },
        { 'mcp-name': `=?base64?${Buffer.from('echo__echo').toString('base64')}?=` },
      );
      assert.equal(textOf(JSON.parse(encoded.body).result), 'echo: b64', 'a Base64-encoded Mcp-Name is decoded');
    });

    it('removed and unknown methods: 404 with Method not found (-32601)', async () => {
      for (const method of ['initialize', 'ping', 'logging/setLevel', 'resources/subscribe', 'tasks/get', 'nope/x']) {
        const r = await post({ method, params: { _meta: envelope() } });
        assert.equal(r.status, 404, method);
        assert.equal(errorOf(r).code, -32601, method);
      }
      const init = await post({ method: 'initialize', params: { _meta: envelope() } });
      assert.match(errorOf(init).message, /server\/discover/);
    });

    it('GET and DELETE under 2026-07-28: 405, a batch: 400', async () => {
      for (const method of ['GET', 'DELETE']) {
        const r = await raw(broker.port, {
          method,
          headers: { ...base, accept: 'text/event-stream', 'mcp-protocol-version': V },
        });
        assert.equal(r.status, 405, method);
      }
      const batch = await raw(broker.port, {
        headers: { ...base, 'mcp-protocol-version': V, 'mcp-method': 'tools/list' },
        body: JSON.stringify([
          { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope() } },
          {
            jsonrpc: '2.0',
            id: 2,
            method: 'tools/list',
            params: { _meta: envelope() },
          },
        ]),
      });
      assert.equal(batch.status, 400);
    });

    it('a body that claims 2026-07-28 without the header is a header mismatch, not a session request', async () => {
      const r = await raw(broker.port, {
        headers: { ...base, 'mcp-method': 'tools/list' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope() } }),
      });
      assert.equal(r.status, 400);
      assert.equal(errorOf(r).code, -32020);
    });
  });

  async function readerToken(): Promise<string> {
    const operator = await connect(broker.url, broker.token, 'operator');
    try {
      const result = await operator.callTool({ name: 'switchboard__client_connection', arguments: { name: 'reader' } });
      const tokenFile = (result.structuredContent as Json).tokenFile as string;
      return fs.readFileSync(tokenFile, 'utf8').trim();
    } finally {
      await operator.close();
    }
  }
});

describe('upstreams of either era, callers of either era (all four combinations)', function () {
  this.timeout(60_000);
  let broker: BrokerProcess;
  let v1: Client;
  let v2: ClientV2;
  const asked: string[] = [];

  before(async () => {
    const root = tempDir('sb-eras-');
    writeRegistry(root, {
      // SDK v2 in 2026-07-28-only mode: usable only if the broker detects its era.
      'mcp-servers.d/modern.yaml': fixtureServer('modern', 'v2-server.mjs'),
      'mcp-servers.d/legacy.yaml': fixtureServer('legacy', 'echo.mjs'),
    });
    broker = await startBrokerProcess({ root });
    v1 = await elicitingV1(broker.url, broker.token, asked);
    v2 = await elicitingV2(broker.url, broker.token, asked);
    await waitForTools(v1, ['modern__echo', 'legacy__echo'], 'both upstreams in the catalog');
  });

  after(async () => {
    await v1?.close().catch(() => undefined);
    await v2?.close().catch(() => undefined);
    await broker?.stop();
    removeTempDirs();
  });

  it("detects each upstream's era and records it in the server status", async () => {
    assert.equal((await status(v1, 'modern')).protocol, '2026-07-28');
    assert.equal((await status(v1, 'legacy')).protocol, '2025-11-25');
  });

  for (const caller of ['v1', 'v2'] as const) {
    for (const upstream of ['legacy', 'modern'] as const) {
      it(`${caller} caller × ${upstream} upstream: list, call and progress`, async () => {
        const client = caller === 'v1' ? v1 : v2;
        const names = (await client.listTools()).tools.map((t) => t.name);
        assert.ok(names.includes(`${upstream}__echo`));
        const r = await client.callTool({ name: `${upstream}__echo`, arguments: { text: 'x' } });
        assert.equal(textOf(r), upstream === 'modern' ? 'v2 echo: x' : 'echo: x');
        const progress: number[] = [];
        const slowTool = upstream === 'modern' ? 'modern__steps' : 'legacy__add';
        const args = upstream === 'modern' ? { steps: 2 } : { a: 1, b: 1 };
        const onprogress = (p: { progress: number }): void => void progress.push(p.progress);
        const call = { name: slowTool, arguments: args };
        // v1's callTool takes a result schema before the options; v2's takes the options second.
        const done =
          caller === 'v1'
            ? await v1.callTool(call, undefined, { onprogress })
            : await v2.callTool(call, { onprogress });
        if (upstream === 'modern') {
          assert.equal(textOf(done), '2 steps done');
          // A client may drop the last progress, sent back to back with the result (test/fixtures/README.md).
          assert.deepEqual(progress.slice(0, 1), [1]);
        } else assert.equal(textOf(done), '2');
      });
    }
    it(`${caller} caller × modern upstream: its input_required reaches the caller in the caller's era`, async () => {
      const client = caller === 'v1' ? v1 : v2;
      const r = await client.callTool({ name: 'modern__confirm', arguments: { question: `ask ${caller}?` } });
      assert.equal(textOf(r), `answered: from ${caller}`);
      assert.ok(asked.includes(`${caller}:ask ${caller}?`));
    });
  }
});

/** The audit log's path under the broker's home, as segments. */
function findAudit(home: string): string[] {
  const walk = (dir: string, rel: string[]): string[] | undefined => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const segs = [...rel, entry.name];
      if (entry.isDirectory()) {
        const found = walk(path.join(dir, entry.name), segs);
        if (found) return found;
      } else if (entry.name.endsWith('audit.jsonl')) return segs;
    }
    return undefined;
  };
  const found = walk(home, []);
  if (!found) throw new Error('no audit log under the broker home');
  return found;
}
