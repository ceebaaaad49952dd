// Security round 3, denial of service by a read-scope agent or a hostile upstream (issue 28 items
// 10-13), each attack against the real broker process and refused, with a positive control:
//   - find_tools: a 1 MB query is refused with the limit named; a hostile upstream's 100,000-letter
//     word does not stall the search index; a normal query still ranks.
//   - subscriptions/listen: streams are capped per client (429) and in all (503, on an endpoint with
//     lowered limits); another client still opens one, and a closed stream frees its slot.
//   - one 2026-07-28 caller's abandoned question (input_required never retried) does not make other
//     callers' elicitation on that stdio server unattributable; the abandoned one still completes;
//     and (beyond the issue) one client cannot park more than 64 calls on input_required.
//   - the token counter: a hostile upstream's long runs are counted (the child's own deadline and
//     watchdog are in security-r3-dos-counter.test.ts).
import assert from 'node:assert/strict';
import * as http from 'node:http';
import { Client as SdkClient, type Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  connect,
  fixtureServer,
  removeTempDirs,
  tempDir,
  textOf,
  waitFor,
  writeRegistry,
  type BrokerProcess,
  clientToken,
} from '../helpers/broker';
import { envelope as stateEnvelope, postStateless } from '../helpers/stateless';
import type { Endpoint } from '../../src/broker/http/endpoint';
import { endpointServingNothing, faultServer, report, startBroker, status, type Json } from './lib';

const V = '2026-07-28';
const LISTEN_PER_CLIENT = 64; // the endpoint's default cap of listen streams per client
const PARKED_PER_CLIENT = 64; // calls parked on input_required per client (http/inputRequired.ts)

const envelope = (capabilities: Json = {}): Json => stateEnvelope(capabilities, 'dos');

/** A 2026-07-28 POST answered in one body (a call, a refusal); the parsed JSON-RPC message. */
const post = (port: number, token: string, message: Json): Promise<{ status: number; message: Json }> =>
  postStateless({ port, token }, message);

interface ListenStream {
  status: number;
  /** The acknowledgment (200) or the error (a refusal). */
  first: Json;
  close(): void;
}

/** Opens a subscriptions/listen stream; resolves with its first message, the stream held open. */
function openListen(port: number, token: string, id: string): Promise<ListenStream> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/mcp',
        agent: false,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': V,
          'mcp-method': 'subscriptions/listen',
        },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        const close = () => req.destroy();
        res.on('data', (chunk: string) => {
          body += chunk;
          const event = /^data: (.*)$/m.exec(body);
          if (res.statusCode === 200 && event) resolve({ status: 200, first: JSON.parse(event[1]) as Json, close });
        });
        res.on('end', () => {
          if (res.statusCode !== 200) resolve({ status: res.statusCode ?? 0, first: JSON.parse(body) as Json, close });
        });
      },
    );
    req.on('error', (err) => reject(err));
    req.end(
      JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'subscriptions/listen',
        params: { _meta: envelope(), notifications: { toolsListChanged: true } },
      }),
    );
  });
}

describe('faults: security round 3, denial of service (issue 28 items 10-13)', function () {
  this.timeout(300_000);
  let broker: BrokerProcess;
  let operator: Client;
  let reader: string;

  before(async () => {
    const root = tempDir('sb-dos-');
    writeRegistry(root, {
      'mcp-servers.d/echo.yaml': fixtureServer('echo', 'echo.mjs'),
      'mcp-servers.d/asks.yaml': fixtureServer('asks', 'asks-client.mjs'),
      // A hostile upstream: one tool's description holds a 100,000-letter word and as many '#'.
      'mcp-servers.d/hostile.yaml': faultServer('hostile', 'bare.mjs', ['--long-word', '100000']),
      'clients.d/reader.yaml': 'name: reader\nmcp_allow: [read]\n',
      'clients.d/other.yaml': 'name: other\nmcp_allow: [read]\n',
    });
    broker = await startBroker({ root });
    operator = await connect(broker.url, broker.token, 'operator');
    reader = await clientToken(operator, 'reader');
    await waitFor(
      async () =>
        (await Promise.all(['echo', 'asks', 'hostile'].map((s) => status(operator, s)))).every(
          (s) => s.state === 'running',
        ),
      'every upstream running',
      60_000,
    );
  });

  after(async () => {
    await operator?.close();
    await broker?.stop();
    removeTempDirs();
  });

  describe('item 10: find_tools costs a bounded time', () => {
    it('refuses a 1 MB query with an error naming the limit; a normal query still ranks', async () => {
      const client = await connect(broker.url, reader, 'reader');
      try {
        const huge = 'read notes '.repeat(100_000);
        const refused = await client.callTool({ name: 'switchboard__find_tools', arguments: { query: huge } }).then(
          (r) => (r.isError ? textOf(r) : 'answered'),
          (err: Error) => err.message,
        );
        assert.match(refused, /'query' is 1100000 characters; find_tools takes at most 1000/);
        // At the limit, as many words as fit: answered, and only the first words count.
        const many = Array.from({ length: 200 }, (_, i) => `word${i}x`)
          .join(' ')
          .slice(0, 1000);
        const manyAnswered = await client.callTool({ name: 'switchboard__find_tools', arguments: { query: many } });
        assert.ok(!manyAnswered.isError, textOf(manyAnswered));
        const found = await client.callTool({ name: 'switchboard__find_tools', arguments: { query: 'echo text' } });
        assert.ok(
          ((found.structuredContent as Json).tools as Json[]).some((t) => t.name === 'echo__echo'),
          `a normal query still ranks: ${textOf(found)}`,
        );
        report('dos-find-tools', { queryChars: huge.length, refused: true, normalQueryRanks: true });
      } finally {
        await client.close();
      }
    });

    it("indexes a hostile upstream's 100,000-letter word without stalling: its tool is found by its other words", async () => {
      const client = await connect(broker.url, reader, 'reader');
      try {
        // Before the bound, stemming that one word took minutes on the broker's only thread.
        const found = await client.callTool(
          { name: 'switchboard__find_tools', arguments: { query: 'read notes' } },
          undefined,
          { timeout: 60_000 },
        );
        assert.ok(
          ((found.structuredContent as Json).tools as Json[]).some((t) => t.name === 'hostile__long_word'),
          textOf(found),
        );
      } finally {
        await client.close();
      }
    });
  });

  describe('item 11: subscriptions/listen streams are capped', () => {
    it('refuses the stream past the per-client cap (429); another client still opens one; a closed stream frees its slot', async () => {
      const open: ListenStream[] = [];
      try {
        for (let i = 0; i < LISTEN_PER_CLIENT; i++) {
          const s = await openListen(broker.port, reader, `r${i}`);
          open.push(s);
          assert.equal(s.status, 200, JSON.stringify(s.first));
          assert.equal(s.first.method, 'notifications/subscriptions/acknowledged');
        }
        const over = await openListen(broker.port, reader, 'over');
        open.push(over);
        assert.equal(over.status, 429, JSON.stringify(over.first));
        assert.match(over.first.error.message, /client 'reader' has 64 open subscriptions\/listen streams, the limit/);
        const other = await openListen(broker.port, await clientToken(operator, 'other'), 'other');
        open.push(other);
        assert.equal(other.status, 200, 'another client is not affected');
        open[0].close();
        const again = await waitFor(async () => {
          const s = await openListen(broker.port, reader, 'again');
          open.push(s);
          return s.status === 200 ? s : undefined;
        }, 'the closed stream to free its slot');
        assert.equal(again.first.method, 'notifications/subscriptions/acknowledged');
        report('dos-listen-per-client', { perClient: LISTEN_PER_CLIENT, refused: 429, slotFreedOnClose: true });
      } finally {
        for (const s of open) s.close();
      }
    });
  });

  describe('item 12: an abandoned question does not block other callers', () => {
    const elicit = (message: string, extra: Json = {}): Json => ({
      method: 'tools/call',
      params: {
        name: 'asks__elicit',
        arguments: { message },
        _meta: envelope({ elicitation: { form: {} } }),
        ...extra,
      },
    });

    it("a second caller's elicitation reaches it while the first caller's question waits; the first still completes", async () => {
      const abandoned = await post(broker.port, reader, elicit('Question for A?'));
      const parked = abandoned.message.result as Json;
      assert.equal(parked.resultType, 'input_required', JSON.stringify(abandoned.message));
      // B, a 2026-07-28 caller of another client: its own question, as input_required.
      const other = await clientToken(operator, 'other');
      const second = await post(broker.port, other, elicit('Question for B?'));
      const asked = second.message.result as Json;
      assert.equal(asked.resultType, 'input_required', `B's question was refused: ${JSON.stringify(second.message)}`);
      const [keyB, requestB] = Object.entries(asked.inputRequests as Json)[0] as [string, Json];
      assert.equal((requestB.params as Json).message, 'Question for B?');
      const answeredB = await post(
        broker.port,
        other,
        elicit('Question for B?', {
          requestState: asked.requestState,
          inputResponses: { [keyB]: { action: 'accept', content: { answer: 'b' } } },
        }),
      );
      assert.deepEqual(JSON.parse(textOf(answeredB.message.result)), { action: 'accept', content: { answer: 'b' } });
      // C, a 2025 session whose client answers elicitation: asked directly.
      const c = new SdkClient({ name: 'session-c', version: '1' }, { capabilities: { elicitation: {} } });
      const seen: string[] = [];
      c.setRequestHandler(ElicitRequestSchema, async (req) => {
        seen.push(req.params.message);
        return { action: 'accept', content: { answer: 'c' } };
      });
      await c.connect(
        new StreamableHTTPClientTransport(new URL(broker.url), {
          requestInit: { headers: { Authorization: `Bearer ${other}` } },
        }),
      );
      try {
        const r = await c.callTool({ name: 'asks__elicit', arguments: { message: 'Question for C?' } });
        assert.deepEqual(JSON.parse(textOf(r)), { action: 'accept', content: { answer: 'c' } }, textOf(r));
        assert.deepEqual(seen, ['Question for C?']);
      } finally {
        await c.close();
      }
      // A's question, answered late, still completes A's call: nothing was lost.
      const [keyA] = Object.keys(parked.inputRequests as Json);
      const answeredA = await post(
        broker.port,
        reader,
        elicit('Question for A?', {
          requestState: parked.requestState,
          inputResponses: { [keyA]: { action: 'accept', content: { answer: 'a' } } },
        }),
      );
      assert.deepEqual(JSON.parse(textOf(answeredA.message.result)), { action: 'accept', content: { answer: 'a' } });
      report('dos-abandoned-question', { otherCallersAsked: 2, abandonedStillCompletes: true });
    });
    it('caps the calls parked on input_required per client (429, beyond the issue); another client is still asked', async () => {
      for (let i = 0; i < PARKED_PER_CLIENT; i++) {
        const parked = await post(broker.port, reader, elicit(`Parked ${i}?`));
        assert.equal((parked.message.result as Json)?.resultType, 'input_required', JSON.stringify(parked.message));
      }
      const over = await post(broker.port, reader, elicit('One too many?'));
      assert.equal(over.status, 429, JSON.stringify(over.message));
      assert.match(over.message.error.message, /client 'reader' has 64 calls parked on input_required, the limit/);
      const other = await post(broker.port, await clientToken(operator, 'other'), elicit('Still asked?'));
      assert.equal((other.message.result as Json).resultType, 'input_required', JSON.stringify(other.message));
      report('dos-parked-calls', { perClient: PARKED_PER_CLIENT, refused: 429, otherClientAsked: true });
    });
  });

  describe('item 13: the token counter is bounded', () => {
    it("counts a hostile upstream's 100,000-letter word and run of '#' (once minutes of CPU)", async () => {
      const counted = await waitFor(
        async () => (await status(operator, 'hostile')).toolTokens as number | undefined,
        "the hostile server's tool tokens",
        90_000,
        250,
      );
      assert.ok(counted > 100, `counted ${counted}`);
      await waitFor(async () => (await status(operator, 'echo')).toolTokens, 'an ordinary server counted too');
      report('dos-token-count-bounded', { longRun: 100_000, toolTokens: counted });
    });
  });
});

describe("faults: the endpoint's cap on all listen streams (lowered limits)", function () {
  this.timeout(60_000);
  let endpoint: Endpoint;

  before(async () => {
    endpoint = await endpointServingNothing(['a', 'b'], { listenLimits: { perClient: 3, total: 4 } });
  });

  after(async () => {
    await endpoint?.close();
  });

  it('refuses a stream past the cap on all (503) and past a client cap (429); a closed one makes room', async () => {
    const open: ListenStream[] = [];
    try {
      for (let i = 0; i < 3; i++) open.push(await openListen(endpoint.port, 'token-a', `a${i}`));
      assert.deepEqual(
        open.map((s) => s.status),
        [200, 200, 200],
      );
      const overA = await openListen(endpoint.port, 'token-a', 'a-over');
      open.push(overA);
      assert.equal(overA.status, 429, JSON.stringify(overA.first));
      const b = await openListen(endpoint.port, 'token-b', 'b0');
      open.push(b);
      assert.equal(b.status, 200, 'the fourth stream in all opens');
      const overAll = await openListen(endpoint.port, 'token-b', 'b-over');
      open.push(overAll);
      assert.equal(overAll.status, 503, JSON.stringify(overAll.first));
      assert.match(overAll.first.error.message, /limit of 4 open subscriptions\/listen streams/);
      open[0].close();
      const room = await waitFor(async () => {
        const s = await openListen(endpoint.port, 'token-b', 'b-again');
        open.push(s);
        return s.status === 200 ? s : undefined;
      }, 'the closed stream to make room');
      assert.equal(room.first.method, 'notifications/subscriptions/acknowledged');
      report('dos-listen-total', { total: 4, refusedAll: 503, refusedClient: 429, slotFreedOnClose: true });
    } finally {
      for (const s of open) s.close();
    }
  });
});
