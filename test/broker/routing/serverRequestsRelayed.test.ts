// Requests an upstream sends its client (sampling, elicitation, roots) travel through the broker to
// the session whose call caused them and back: real fixtures over stdio and Streamable HTTP, real
// server-everything from npm, real SDK clients with real handlers, through /mcp and /servers/<name>/mcp.
import assert from 'node:assert/strict';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import {
  connect,
  fixtureServer,
  removeTempDirs,
  startBrokerProcess,
  tempDir,
  waitFor,
  writeRegistry,
  type BrokerProcess,
  facade,
  startHttpFixture,
  everythingServer,
  call,
  auditEntries,
  clientToken,
  connectClient,
  waitForRunning,
} from '../../helpers/broker';

type Json = Record<string, any>;

/** What one test client's handlers were asked, so a test can tell who saw what. */
interface Seen {
  sampled: string[];
  /** The tool names each sampling request offered. */
  samplingTools: string[][];
  elicited: string[];
  rootsListed: number;
}

const CAPABLE = { sampling: {}, elicitation: { form: {}, url: {} }, roots: { listChanged: true } };

/** A client that declares sampling, elicitation and roots, and answers each with its own name in it. */
async function capableClient(
  url: string,
  token: string,
  name: string,
  hold?: Promise<void>,
  capabilities?: Json,
): Promise<{ client: Client; seen: Seen }> {
  const seen: Seen = { sampled: [], samplingTools: [], elicited: [], rootsListed: 0 };
  const client = new Client({ name, version: '1.0.0' }, { capabilities: capabilities ?? CAPABLE });
  client.setRequestHandler(CreateMessageRequestSchema, (request) => {
    const content = request.params.messages[0]?.content as { text?: string };
    seen.sampled.push(content.text ?? '');
    seen.samplingTools.push((request.params.tools ?? []).map((t) => t.name));
    const reply = { type: 'text' as const, text: `${name} sampled: ${content.text}` };
    return { role: 'assistant', content: reply, model: 'test-model' };
  });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    seen.elicited.push(request.params.message);
    await hold; // a person taking their time to answer
    if (request.params.mode === 'url') return { action: 'accept' };
    return { action: 'accept', content: { answer: `${name} answers ${request.params.message}` } };
  });
  client.setRequestHandler(ListRootsRequestSchema, () => {
    seen.rootsListed++;
    return { roots: [{ uri: `file:///home/${name}`, name: `${name}'s root` }] };
  });
  return { client: await connectClient(client, url, token), seen };
}

describe('server→client requests through the broker', function () {
  this.timeout(90_000);
  let broker: BrokerProcess;
  let remote: { url: string; stop(): Promise<void> };
  let root: string;
  let a: { client: Client; seen: Seen };
  let b: { client: Client; seen: Seen };
  let terminalToken: string;

  before(async () => {
    remote = await startHttpFixture('asks-client.mjs');
    root = tempDir('sb-s2c-');
    writeRegistry(root, {
      'mcp-servers.d/asks.yaml': fixtureServer('asks', 'asks-client.mjs'),
      'mcp-servers.d/rasks.yaml': `name: rasks\ntrust: trusted\ntransport: http\nurl: ${remote.url}\n`,
      'mcp-servers.d/everything.yaml': everythingServer(),
      'clients.d/terminal.yaml': 'name: terminal\nmcp_allow: [read]\n',
    });
    broker = await startBrokerProcess({ root });
    a = await capableClient(broker.url, broker.token, 'alice');
    b = await capableClient(broker.url, broker.token, 'bob');
    await waitForRunning(a.client, 3, 'asks, rasks and everything running');
    terminalToken = await clientToken(a.client, 'terminal');
  });

  after(async () => {
    await a?.client.close().catch(() => undefined);
    await b?.client.close().catch(() => undefined);
    await broker?.stop();
    await remote?.stop();
    removeTempDirs();
  });

  for (const server of ['asks', 'rasks']) {
    const kind = server === 'asks' ? 'stdio' : 'Streamable HTTP';

    it(`${kind}: sampling, form and url elicitation and roots reach the caller on /mcp and come back`, async () => {
      const sampled = await call(a.client, `${server}__sample`, { prompt: 'write a haiku' });
      assert.equal(sampled.isError, false, sampled.text);
      assert.equal(JSON.parse(sampled.text).content.text, 'alice sampled: write a haiku');
      const elicited = await call(a.client, `${server}__elicit`, { message: `${server} asks alice` });
      const answered = { action: 'accept', content: { answer: `alice answers ${server} asks alice` } };
      assert.deepEqual(JSON.parse(elicited.text), answered);
      const url = await call(a.client, `${server}__elicit-url`, { url: 'https://example.com/sign-in' });
      assert.deepEqual(JSON.parse(url.text), { action: 'accept' });
      const roots = await call(a.client, `${server}__roots`);
      assert.deepEqual(JSON.parse(roots.text).roots, [{ uri: 'file:///home/alice', name: "alice's root" }]);
      assert.ok(a.seen.elicited.includes(`${server} asks alice`));
      assert.ok(!b.seen.elicited.includes(`${server} asks alice`), 'the other session never saw it');
    });

    it(`${kind}: the same through /servers/${server}/mcp`, async () => {
      const url = broker.url.replace(/\/mcp$/, `/servers/${server}/mcp`);
      const own = await capableClient(url, broker.token, 'carol');
      try {
        const sampled = await call(own.client, 'sample', { prompt: 'per server' });
        assert.equal(JSON.parse(sampled.text).content.text, 'carol sampled: per server');
        const elicited = await call(own.client, 'elicit', { message: 'per-server question' });
        assert.equal(JSON.parse(elicited.text).content.answer, 'carol answers per-server question');
        const roots = await call(own.client, 'roots');
        assert.equal(JSON.parse(roots.text).roots[0].uri, 'file:///home/carol');
      } finally {
        await own.client.close();
      }
    });
  }

  it('a client that declared nothing gets the clear error, naming itself, the capability and the server', async () => {
    const terminal = await connect(broker.url, terminalToken, 'terminal');
    try {
      const elicited = await call(terminal, 'asks__elicit', { message: 'nobody can show this' });
      assert.equal(elicited.isError, true);
      assert.match(
        elicited.text,
        /-32601 (MCP error -32601: )?Client 'terminal' did not declare elicitation\.form; .*'asks' cannot be shown/,
      );
      const sampled = await call(terminal, 'rasks__sample', { prompt: 'x' });
      assert.match(sampled.text, /Client 'terminal' did not declare sampling; .*server 'rasks' cannot be shown/);
      // Roots are the one thing the broker can answer itself: the registry root.
      const roots = await call(terminal, 'asks__roots');
      const registryRoot = { uri: pathToFileURL(root).href, name: 'workspace registry root' };
      assert.deepEqual(JSON.parse(roots.text).roots, [registryRoot]);
    } finally {
      await terminal.close();
    }
  });

  it('sampling with tools reaches a client that declared sampling.tools, and only such a client', async () => {
    const withTools = await capableClient(broker.url, broker.token, 'erin', undefined, {
      ...CAPABLE,
      sampling: { tools: {} },
    });
    try {
      for (const server of ['asks', 'rasks']) {
        const sampled = await call(withTools.client, `${server}__sample`, { prompt: 'use a tool', withTools: true });
        assert.equal(JSON.parse(sampled.text).content.text, 'erin sampled: use a tool');
      }
      assert.deepEqual(withTools.seen.samplingTools, [['lookup'], ['lookup']]);
      const refused = await call(a.client, 'asks__sample', { prompt: 'use a tool', withTools: true });
      assert.match(refused.text, /Client 'operator' did not declare sampling\.tools/);
    } finally {
      await withTools.client.close();
    }
  });

  it('Streamable HTTP: two sessions eliciting at once on one shared upstream each get only their own', async () => {
    const before = { a: a.seen.elicited.length, b: b.seen.elicited.length };
    const [fromA, fromB] = await Promise.all([
      call(a.client, 'rasks__elicit', { message: 'question for alice', peers: 2 }),
      call(b.client, 'rasks__elicit', { message: 'question for bob', peers: 2 }),
    ]);
    assert.equal(JSON.parse(fromA.text).content.answer, 'alice answers question for alice');
    assert.equal(JSON.parse(fromB.text).content.answer, 'bob answers question for bob');
    assert.deepEqual(a.seen.elicited.slice(before.a), ['question for alice']);
    assert.deepEqual(b.seen.elicited.slice(before.b), ['question for bob']);
  });

  it("stdio (and requests on no call's stream): with two sessions in flight, refused, shown to nobody", async () => {
    for (const [server, related] of [
      ['asks', true],
      ['rasks', false],
    ] as const) {
      const before = { a: a.seen.elicited.length, b: b.seen.elicited.length };
      const [fromA, fromB] = await Promise.all([
        call(a.client, `${server}__elicit`, { message: 'which one?', peers: 2, related }),
        call(b.client, `${server}__elicit`, { message: 'which one?', peers: 2, related }),
      ]);
      for (const result of [fromA, fromB]) {
        assert.equal(result.isError, true, result.text);
        const refused = `from server '${server}' could not be attributed to one caller: 2 sessions`;
        assert.match(result.text, new RegExp(refused));
      }
      assert.equal(a.seen.elicited.length, before.a, 'alice saw nothing');
      assert.equal(b.seen.elicited.length, before.b, 'bob saw nothing');
    }
    // One session alone with an unrelated request: there is only one caller it can be for.
    const alone = await call(a.client, 'rasks__elicit', { message: 'alone', related: false });
    assert.equal(JSON.parse(alone.text).content.answer, 'alice answers alone');
  });

  it('a URL elicitation error (-32042) reaches the caller as it is', async () => {
    for (const server of ['asks', 'rasks']) {
      const args = { url: 'https://example.com/auth' };
      const failing = a.client.callTool({ name: `${server}__needs-url`, arguments: args });
      await assert.rejects(failing, (err) => {
        assert.ok(err instanceof McpError, String(err));
        assert.equal(err.code, -32042);
        assert.match(err.message, /Authorization is required/);
        assert.deepEqual((err.data as Json).elicitations, [
          { mode: 'url', message: 'Authorize first', url: 'https://example.com/auth', elicitationId: 'auth-1' },
        ]);
        return true;
      });
    }
  });

  it('server-everything from npm: its trigger tools exist for a capable client and return its answers', async () => {
    const names = (await a.client.listTools()).tools.map((t) => t.name);
    const triggers = [
      'trigger-sampling-request',
      'trigger-elicitation-request',
      'trigger-url-elicitation',
      'get-roots-list',
    ];
    for (const tool of triggers) {
      assert.ok(names.includes(`everything__${tool}`), `everything__${tool} is listed`);
    }
    const sampled = await call(a.client, 'everything__trigger-sampling-request', { prompt: 'from everything' });
    assert.equal(sampled.isError, false, sampled.text);
    assert.match(sampled.text, /alice sampled: /);
    assert.ok(a.seen.sampled.some((t) => t.includes('from everything')));
    const url = await call(a.client, 'everything__trigger-url-elicitation', { url: 'https://example.com/everything' });
    assert.equal(url.isError, false, url.text);
    assert.ok(a.seen.elicited.length > 0);
    const roots = await call(a.client, 'everything__get-roots-list');
    assert.equal(roots.isError, false, roots.text);
    // It asked for roots on connect, when no call was in flight: it has the registry root.
    assert.ok(roots.text.includes(pathToFileURL(root).href), roots.text);
  });

  it('every server→client request is audited (server, method, client, outcome, ms), never its content', async () => {
    const entries = await waitFor(() => {
      const found = auditEntries(broker.home, (e) => e.event === 'server-request');
      return found.some((e) => e.outcome === 'error') && found.length >= 8 ? found : undefined;
    }, 'audit entries for server requests');
    const ok = entries.find((e) => e.server === 'asks' && e.method === 'sampling/createMessage' && e.outcome === 'ok');
    assert.ok(ok, JSON.stringify(entries.slice(0, 5)));
    assert.equal(ok.client, 'operator');
    assert.equal(ok.routedTo, 'client');
    assert.equal(typeof ok.ms, 'number');
    const refused = entries.find((e) => e.method === 'elicitation/create' && e.client === 'terminal');
    assert.equal(refused?.outcome, 'error');
    assert.equal(refused?.routedTo, 'none');
    const text = JSON.stringify(entries);
    assert.doesNotMatch(text, /write a haiku|question for alice|alice answers/, 'no content in the audit log');
  });

  it('the state shows pending server requests per server while a client has not answered', async () => {
    let answer!: () => void;
    const slow = await capableClient(broker.url, broker.token, 'dave', new Promise((r) => (answer = r)));
    try {
      const asked = call(slow.client, 'asks__elicit', { message: 'take your time' });
      await waitFor(
        async () => (await facade(a.client, 'server_status', { name: 'asks' })).pendingServerRequests === 1,
        'one pending server request on asks',
      );
      assert.equal((await facade(a.client, 'server_status', { name: 'rasks' })).pendingServerRequests, 0);
      answer();
      assert.equal(JSON.parse((await asked).text).content.answer, 'dave answers take your time');
      assert.equal((await facade(a.client, 'server_status', { name: 'asks' })).pendingServerRequests, 0);
    } finally {
      await slow.client.close();
    }
  });
});
