// Remote upstreams of either era over Streamable HTTP: an SDK v2 server in 2026-07-28-only stateless
// mode (createMcpHandler, test/fixtures/v2-server.mjs --http) and an SDK v1 session server
// (echo.mjs --http), each reached by SDK v1 session callers and SDK v2 2026-07-28 callers through
// the real broker: era detection, lists, calls, progress, cancellation, errors, input_required,
// list changes and log messages.
import assert from 'node:assert/strict';
import type { Client as ClientV2 } from '@modelcontextprotocol/client';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CreateTaskResultSchema,
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import {
  connect,
  fixtureServer,
  removeTempDirs,
  startBrokerProcess,
  startHttpFixture,
  tempDir,
  textOf,
  waitFor,
  writeRegistry,
  type BrokerProcess,
  status,
} from '../../helpers/broker';
import { elicitingV1, elicitingV2, waitForTools } from '../../helpers/eraCallers';

type Json = Record<string, unknown>;
const V = '2026-07-28';

const envelope = (extra: Json = {}): Json => ({
  'io.modelcontextprotocol/protocolVersion': V,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  ...extra,
});

/** The headers of a raw 2026-07-28 POST of `method` (Mcp-Name mirrors the body's name or uri). */
function rawHeaders(token: string, method: string, named?: string): Record<string, string> {
  return {
    authorization: `Bearer ${token}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': V,
    'mcp-method': method,
    ...(named ? { 'mcp-name': named } : {}),
  };
}

/** A raw 2026-07-28 POST to the broker; every JSON-RPC message of the answer (JSON or SSE), in order. */
async function postRaw(url: string, token: string, method: string, params: Json): Promise<Json[]> {
  const res = await fetch(url, {
    method: 'POST',
    headers: rawHeaders(token, method, (params.name ?? params.uri) as string | undefined),
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const text = await res.text();
  if ((res.headers.get('content-type') ?? '').includes('text/event-stream')) {
    return text
      .split(/\n\n/)
      .map((block) => block.split('\n').find((l) => l.startsWith('data: ')))
      .filter((l): l is string => l !== undefined)
      .map((l) => JSON.parse(l.slice(6)) as Json);
  }
  return [JSON.parse(text) as Json];
}

/** A 2026-07-28 subscriptions/listen POST to the broker, kept open; every message it carries is collected. */
async function listenRaw(url: string, token: string, filter: Json): Promise<{ events: Json[]; close(): void }> {
  const controller = new AbortController();
  const res = await fetch(url, {
    method: 'POST',
    headers: rawHeaders(token, 'subscriptions/listen'),
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 'listen-remote',
      method: 'subscriptions/listen',
      params: { _meta: envelope(), notifications: filter },
    }),
    signal: controller.signal,
  });
  const events: Json[] = [];
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      for (let i = buffer.indexOf('\n\n'); i >= 0; i = buffer.indexOf('\n\n')) {
        const data = buffer
          .slice(0, i)
          .split('\n')
          .find((l) => l.startsWith('data: '));
        buffer = buffer.slice(i + 2);
        if (data) events.push(JSON.parse(data.slice(6)) as Json);
      }
    }
  })().catch(() => undefined);
  return { events, close: () => controller.abort() };
}

describe('remote upstreams of either era over Streamable HTTP', function () {
  this.timeout(60_000);
  let broker: BrokerProcess;
  let modern: { url: string; stop(): Promise<void> };
  let legacy: { url: string; stop(): Promise<void> };
  let v1: Client;
  let v2: ClientV2;
  const asked: string[] = [];
  const logs: Json[] = [];
  let listChanged = 0;

  before(async () => {
    modern = await startHttpFixture('v2-server.mjs');
    legacy = await startHttpFixture('echo.mjs');
    const root = tempDir('sb-remote-eras-');
    writeRegistry(root, {
      // 2026-07-28 only: a 2025 initialize gets -32022, so it works only if the broker detects the era.
      'mcp-servers.d/rmodern.yaml': `name: rmodern\ntrust: trusted\ntransport: http\nurl: ${modern.url}\n`,
      'mcp-servers.d/rlegacy.yaml': `name: rlegacy\ntrust: trusted\ntransport: http\nurl: ${legacy.url}\n`,
    });
    broker = await startBrokerProcess({ root });
    v1 = await elicitingV1(broker.url, broker.token, asked, (client) => {
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params as Json));
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => void listChanged++);
    });
    v2 = await elicitingV2(broker.url, broker.token, asked);
    await waitForTools(v1, ['rmodern__echo', 'rlegacy__echo'], 'both remote upstreams in the catalog');
  });

  after(async () => {
    await v1?.close().catch(() => undefined);
    await v2?.close().catch(() => undefined);
    await broker?.stop();
    await modern?.stop();
    await legacy?.stop();
    removeTempDirs();
  });

  it("detects each remote upstream's era (server/discover, else initialize) and records it", async () => {
    const m = await status(v1, 'rmodern');
    assert.equal(m.state, 'running');
    assert.equal(m.protocol, '2026-07-28');
    const l = await status(v1, 'rlegacy');
    assert.equal(l.state, 'running');
    assert.equal(l.protocol, '2025-11-25');
  });

  for (const caller of ['v1', 'v2'] as const) {
    for (const upstream of ['rlegacy', 'rmodern'] as const) {
      const era = upstream === 'rmodern' ? '2026-07-28' : '2025-11-25';
      it(`${caller} caller × ${era} remote upstream: list, call, progress, errors`, async () => {
        const client = caller === 'v1' ? v1 : v2;
        const names = (await client.listTools()).tools.map((t) => t.name);
        assert.ok(names.includes(`${upstream}__echo`));
        const r = await client.callTool({ name: `${upstream}__echo`, arguments: { text: 'x' } });
        assert.equal(textOf(r), upstream === 'rmodern' ? 'v2 echo: x' : 'echo: x');
        await assert.rejects(
          client.callTool({ name: `${upstream}__nope`, arguments: {} }),
          new RegExp(`Unknown tool '${upstream}__nope'`),
        );
        if (upstream === 'rlegacy') return;
        const progress: number[] = [];
        const onprogress = (p: { progress: number }): void => void progress.push(p.progress);
        const call = { name: 'rmodern__steps', arguments: { steps: 3 } };
        // v1's callTool takes a result schema before the options; v2's takes the options second.
        const done =
          caller === 'v1'
            ? await v1.callTool(call, undefined, { onprogress })
            : await v2.callTool(call, { onprogress });
        assert.equal(textOf(done), '3 steps done');
        // A client may drop the last progress, sent back to back with the result (test/fixtures/README.md).
        assert.deepEqual(progress.slice(0, 2), [1, 2]);
        // A tool's error result passes through as it is.
        const refused = await client.callTool({ name: 'rmodern__refuse', arguments: {} });
        assert.equal(refused.isError, true);
        assert.equal(textOf(refused), 'refused on purpose');
      });
    }

    it(`${caller} caller × 2026-07-28 remote upstream: cancelling the call closes its upstream stream`, async () => {
      const count = async (): Promise<number> =>
        Number(textOf(await v1.callTool({ name: 'rmodern__cancelled', arguments: {} })));
      const before = await count();
      const controller = new AbortController();
      const call =
        caller === 'v1'
          ? v1.callTool({ name: 'rmodern__hang', arguments: {} }, undefined, { signal: controller.signal })
          : v2.callTool({ name: 'rmodern__hang', arguments: {} }, { signal: controller.signal });
      await new Promise((r) => setTimeout(r, 300));
      controller.abort();
      await assert.rejects(call);
      await waitFor(async () => (await count()) === before + 1, 'the upstream to see the cancellation');
    });

    it(`${caller} caller × 2026-07-28 remote upstream: its input_required reaches the caller in the caller's era`, async () => {
      const client = caller === 'v1' ? v1 : v2;
      const r = await client.callTool({ name: 'rmodern__confirm', arguments: { question: `remote ${caller}?` } });
      assert.equal(textOf(r), `answered: from ${caller}`);
      assert.ok(asked.includes(`${caller}:remote ${caller}?`));
    });
  }

  it("propagates the remote upstream's list changes (its subscriptions/listen) to callers of both eras", async () => {
    const listen = await listenRaw(broker.url, broker.token, { toolsListChanged: true });
    await waitFor(() => listen.events[0], 'the acknowledgment of the listen stream');
    const before = listChanged;
    assert.equal(textOf(await v1.callTool({ name: 'rmodern__spare', arguments: {} })), 'spare here');
    const r = await v2.callTool({ name: 'rmodern__drop', arguments: {} });
    assert.equal(textOf(r), 'dropped spare');
    await waitFor(() => listChanged > before, 'tools/list_changed on the v1 session');
    await waitFor(
      async () => !(await v2.listTools()).tools.some((t) => t.name === 'rmodern__spare'),
      'the catalog without the dropped tool, for the v2 caller too',
    );
    try {
      await waitFor(
        () => listen.events.some((e) => e.method === 'notifications/tools/list_changed'),
        "tools/list_changed on the 2026-07-28 caller's subscriptions/listen",
      );
    } finally {
      listen.close();
    }
  });

  it('sends a 2026-07-28 caller the log messages of its own request, at the io.modelcontextprotocol/logLevel it set', async () => {
    const messages = await postRaw(broker.url, broker.token, 'tools/call', {
      name: 'rmodern__chatty',
      arguments: {},
      _meta: envelope({ 'io.modelcontextprotocol/logLevel': 'warning' }),
    });
    const levels = messages.filter((m) => m.method === 'notifications/message').map((m) => (m.params as Json).level);
    assert.deepEqual(levels, ['warning', 'error']);
    const last = messages[messages.length - 1];
    assert.equal(textOf(last.result), 'said it');
    // Without a level, a 2026-07-28 caller gets none (the revision sends log messages only when asked).
    const quiet = await postRaw(broker.url, broker.token, 'tools/call', {
      name: 'rmodern__chatty',
      arguments: {},
      _meta: envelope(),
    });
    assert.equal(quiet.filter((m) => m.method === 'notifications/message').length, 0);
    const bad = await postRaw(broker.url, broker.token, 'tools/call', {
      name: 'rmodern__chatty',
      arguments: {},
      _meta: envelope({ 'io.modelcontextprotocol/logLevel': 'loud' }),
    });
    assert.equal((bad[0].error as Json).code, -32602);
  });

  it('sends session callers the log messages of calls that no 2026-07-28 caller claimed', async () => {
    logs.length = 0;
    assert.equal(textOf(await v1.callTool({ name: 'rmodern__chatty', arguments: {} })), 'said it');
    await waitFor(() => logs.some((l) => l.level === 'error'), 'the log messages on the v1 session');
    const mine = logs.filter((l) => l.logger === 'rmodern/chatty').map((l) => l.level);
    assert.ok(mine.includes('warning') && mine.includes('error'), mine.join(', '));
  });
});

describe('tasks across the eras', function () {
  this.timeout(60_000);
  let broker: BrokerProcess;
  let v1: Client;

  before(async () => {
    const root = tempDir('sb-task-eras-');
    writeRegistry(root, {
      'mcp-servers.d/tasks.yaml': fixtureServer('tasks', 'tasks.mjs'),
      'mcp-servers.d/modern.yaml': fixtureServer('modern', 'v2-server.mjs'),
    });
    broker = await startBrokerProcess({ root });
    v1 = await connect(broker.url, broker.token, 'v1-tasks');
    await waitForTools(v1, ['modern__echo', 'tasks__slow-task'], 'both upstreams in the catalog');
  });

  after(async () => {
    await v1?.close().catch(() => undefined);
    await broker?.stop();
    removeTempDirs();
  });

  it('2025-11-25 caller × 2025-11-25 upstream: a task-augmented call creates a task (tasks.test.ts has the rest)', async () => {
    const created = await v1.request(
      {
        method: 'tools/call',
        params: { name: 'tasks__slow-task', arguments: { ms: 10, text: 't' }, task: { ttl: 60_000 } },
      },
      CreateTaskResultSchema,
    );
    assert.match(created.task.taskId, /^tasks__/);
  });

  it('2025-11-25 caller × 2026-07-28 upstream: a task-augmented call fails naming the feature and the era', async () => {
    const tools = (await v1.listTools()).tools;
    const echo = tools.find((t) => t.name === 'modern__echo');
    assert.equal((echo?.execution as Json | undefined)?.taskSupport, undefined, 'no task support is offered for it');
    await assert.rejects(
      v1.request(
        { method: 'tools/call', params: { name: 'modern__echo', arguments: { text: 'x' }, task: { ttl: 60_000 } } },
        CreateTaskResultSchema,
      ),
      (err: { code?: number; message: string }) => {
        assert.equal(err.code, -32601);
        assert.match(err.message, /speaks 2026-07-28, where tasks are the io\.modelcontextprotocol\/tasks extension/);
        return true;
      },
    );
  });

  it('2026-07-28 caller × either upstream: tasks/* are refused naming the extension and the era', async () => {
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      const [reply] = await postRaw(broker.url, broker.token, method, { taskId: 'tasks__x', _meta: envelope() });
      const error = reply.error as Json;
      assert.equal(error.code, -32601);
      assert.match(String(error.message), /io\.modelcontextprotocol\/tasks extension is not implemented by the broker/);
    }
  });

  it('2026-07-28 caller × 2025-11-25 upstream: a tool that runs only as a task fails naming the feature and the era', async () => {
    const [reply] = await postRaw(broker.url, broker.token, 'tools/call', {
      name: 'tasks__failing-task',
      arguments: {},
      _meta: envelope(),
    });
    const error = reply.error as Json;
    assert.ok(error, JSON.stringify(reply));
    assert.match(String(error.message), /only as a task/);
    assert.match(String(error.message), /2026-07-28/);
  });
});
