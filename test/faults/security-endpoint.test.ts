// Security round 2, the endpoint's findings, against a real broker process: sessions are capped per
// client (the oldest idle one makes room; when all are in use a new one is refused), a slow body
// gets 408 and a closed connection, an upstream's log flood is rate-limited with a count of what
// was dropped, and a session is bound to its identity (a declared client named `operator` cannot
// use the operator's session). The cap on all sessions is checked on a real endpoint (real HTTP,
// real SDK server) started here with lowered limits, since the default takes 512 sessions.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  connect,
  fixtureServer,
  removeTempDirs,
  tempDir,
  textOf,
  waitFor,
  writeRegistry,
  type BrokerProcess,
} from '../helpers/broker';
import type { Endpoint } from '../../src/broker/http/endpoint';
import {
  RawHttp,
  RawSession,
  endpointServingNothing,
  facade,
  noteUpstreams,
  pool,
  report,
  startBroker,
  type Json,
} from './lib';

const PER_CLIENT = 64; // the endpoint's default cap per client
const BODY_TIMEOUT_S = 30; // the endpoint's default body deadline

/** A GET event stream held open on a session (the session is then in use); resolves with its status. */
function openStream(
  port: number,
  token: string,
  sessionId: string,
  agent: http.Agent,
): Promise<{ status: number; req: http.ClientRequest }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'GET',
        path: '/mcp',
        agent,
        headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', 'mcp-session-id': sessionId },
      },
      (res) => {
        res.on('data', () => undefined);
        resolve({ status: res.statusCode ?? 0, req });
      },
    );
    req.on('error', (err) => reject(err));
    req.end();
  });
}

/** The broker's log rate in this file (`serve --log-rate`): messages per second, and the burst. */
const LOG_RATE = 10;
const LOG_BURST = 20;
describe('faults: security of the endpoint (round 2)', function () {
  this.timeout(240_000);
  let root: string;
  let broker: BrokerProcess;
  let operator: Client;
  const tokens: Record<string, string> = {};
  /** Why a token could not be issued (a reserved name), by client. */
  const refused: Record<string, string> = {};

  before(async () => {
    root = tempDir('sb-fault-sec-ep-');
    writeRegistry(root, {
      'mcp-servers.d/echo.yaml': fixtureServer('echo', 'echo.mjs', ['--logging']),
      'clients.d/reader.yaml': 'name: reader\nmcp_allow: [read]\n',
      'clients.d/crowd.yaml': 'name: crowd\nmcp_allow: [read]\n',
      // A declared client that takes the operator's name, with a read token.
      'clients.d/operator.yaml': 'name: operator\nmcp_allow: [read]\n',
    });
    // A log rate well under what the flood sends on even a loaded machine, so the limit is what is
    // tested, not this machine's speed (at the default 50/s a slow run may never exceed it).
    broker = await startBroker({ root, args: ['--log-rate', `${LOG_RATE}/${LOG_BURST}`] });
    operator = await connect(broker.url, broker.token, 'operator');
    const running = async () =>
      ((await facade(operator, 'list_servers')).servers as Json[]).some((s) => s.state === 'running');
    await waitFor(running, 'echo running', 30_000, 100);
    noteUpstreams(broker);
    for (const name of ['reader', 'crowd', 'operator']) {
      try {
        const { tokenFile } = await facade(operator, 'client_connection', { name });
        tokens[name] = fs.readFileSync(tokenFile, 'utf8').trim();
      } catch (err) {
        refused[name] = (err as Error).message;
      }
    }
    assert.ok(tokens.reader && tokens.crowd, 'the reader and crowd clients have tokens');
  });

  after(async () => {
    await operator?.close().catch(() => undefined);
    await broker?.stop();
    removeTempDirs();
  });

  it('caps sessions per client: the oldest idle one makes room; when all are in use, a new one gets 429', async () => {
    const rawHttp = new RawHttp(broker.port, tokens.crowd);
    const streams = new http.Agent({ keepAlive: false, maxSockets: PER_CLIENT + 8 });
    const held: http.ClientRequest[] = [];
    try {
      const sessions: RawSession[] = [];
      for (let i = 0; i < PER_CLIENT; i++) {
        const s = new RawSession(rawHttp, `crowd${i}`);
        await s.initialize();
        sessions.push(s);
      }
      // Keep the newest ones in use (a ping), so "oldest idle" is the first session.
      for (const s of sessions.slice(1)) {
        assert.equal((await s.post({ jsonrpc: '2.0', id: s.newId(), method: 'ping' })).status, 200);
      }
      const extra = new RawSession(rawHttp, 'crowd-extra');
      await extra.initialize();
      const first = await sessions[0].post({ jsonrpc: '2.0', id: 'p', method: 'ping' });
      assert.equal(first.status, 404, 'the oldest idle session was closed to make room');
      const second = await sessions[1].post({ jsonrpc: '2.0', id: 'p', method: 'ping' });
      assert.equal(second.status, 200, 'the others stay');

      // Every session of the client in use (an open event stream each): the next one is refused.
      const live = [...sessions.slice(1), extra];
      await pool(live, 8, async (s) => {
        const { status, req } = await openStream(broker.port, tokens.crowd, s.sessionId!, streams);
        held.push(req);
        assert.equal(status, 200);
      });
      const res = await rawHttp.request({
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 'over',
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
        }),
      });
      assert.equal(res.status, 429, res.body);
      const error = JSON.parse(res.body);
      assert.equal(error.id, 'over');
      assert.match(error.error.message, new RegExp(`client 'crowd' has ${PER_CLIENT} open sessions, the limit`));
      assert.match(error.error.message, /DELETE/);
      // Another client is not affected by crowd's sessions.
      const reader = await connect(broker.url, tokens.reader, 'reader');
      await facade(reader, 'list_servers');
      await reader.close();
      report('session-cap', { perClient: PER_CLIENT, opened: PER_CLIENT + 1, evictedOldestIdle: 1, refused: 429 });
    } finally {
      for (const req of held) req.destroy();
      streams.destroy();
      rawHttp.close();
    }
  });

  it(`answers a body that trickles in with 408 after ${BODY_TIMEOUT_S} s and closes the connection`, async function () {
    this.timeout((BODY_TIMEOUT_S + 60) * 1000);
    const readerHttp = new RawHttp(broker.port, tokens.reader);
    const s = new RawSession(readerHttp, 'slow');
    await s.initialize();
    const started = Date.now();
    const { head, closed } = await new Promise<{ head: string; closed: boolean }>((resolve, reject) => {
      const socket = net.connect(broker.port, '127.0.0.1', () => {
        socket.write(
          `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${broker.port}\r\n` +
            `Authorization: Bearer ${tokens.reader}\r\nContent-Type: application/json\r\n` +
            `Accept: application/json, text/event-stream\r\nMcp-Session-Id: ${s.sessionId}\r\n` +
            'Content-Length: 100000\r\n\r\n{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"',
        );
      });
      // One byte a second: the whole body would take more than a day.
      const trickle = setInterval(() => {
        if (socket.writable) socket.write('x');
      }, 1000);
      // The deadline plus a generous margin: without one, nothing arrives here.
      const giveUp = setTimeout(() => socket.destroy(new Error('no answer')), (BODY_TIMEOUT_S + 45) * 1000);
      let text = '';
      socket.on('data', (d) => {
        text += d.toString('utf8');
      });
      socket.on('error', (err) => {
        if (!text) {
          clearInterval(trickle);
          clearTimeout(giveUp);
          reject(err);
        }
      });
      socket.on('close', () => {
        clearInterval(trickle);
        clearTimeout(giveUp);
        resolve({ head: text, closed: true });
      });
    });
    assert.match(head, /^HTTP\/1\.1 408 /, head.slice(0, 200));
    const payload = head.slice(head.indexOf('\r\n\r\n') + 4);
    const body = JSON.parse(payload.replace(/^[0-9a-f]+\r\n/, '').replace(/\r\n0\r\n\r\n$/, '')) as Json;
    assert.match(body.error.message, new RegExp(`did not arrive within ${BODY_TIMEOUT_S} s`));
    assert.ok(closed, 'the broker closed the connection');
    // The session and the broker are fine.
    assert.equal((await s.post({ jsonrpc: '2.0', id: 2, method: 'ping' })).status, 200);
    readerHttp.close();
    const answeredAfterS = Math.round((Date.now() - started) / 1000);
    report('body-deadline', { deadlineS: BODY_TIMEOUT_S, answeredAfterS, status: 408 });
  });

  it("rate-limits an upstream's log flood and says how many messages it dropped", async () => {
    const listener = await connect(broker.url, tokens.reader, 'listener');
    const caller = await connect(broker.url, broker.token, 'caller');
    let forwarded = 0;
    let dropped = 0;
    const warnings: string[] = [];
    listener.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      const p = n.params as Json;
      if (p.level === 'warning' && p.logger === 'echo') {
        warnings.push(String(p.data));
        const m = /^dropped (\d+) log messages? from 'echo' \(rate limit\)$/.exec(String(p.data));
        if (m) dropped += Number(m[1]);
      } else if (p.data === 'echo called') {
        forwarded++;
      }
    });
    // The listener's event stream is open once it sees a message (the warm-up's first messages may
    // go out before it is); from then on every message is accounted for.
    let warmUp = 0;
    await waitFor(
      async () => {
        warmUp++;
        await caller.callTool({ name: 'echo__echo', arguments: { text: 'warm-up' } });
        return forwarded > 0;
      },
      'the listener to receive a log message',
      15_000,
      200,
    );
    assert.deepEqual(warnings, [], 'nothing dropped during the warm-up');
    const calls = 1500;
    let failed = 0;
    await pool(
      Array.from({ length: calls }, (_, i) => i),
      16,
      async (i) => {
        const r = await caller.callTool({ name: 'echo__echo', arguments: { text: `flood ${i}` } });
        if (textOf(r) !== `echo: flood ${i}`) failed++;
      },
    );
    assert.equal(failed, 0, 'every call was answered');
    // Every message is either forwarded or counted in a "dropped N" warning, once the bucket refilled.
    const accounted = () => forwarded + dropped;
    await waitFor(() => accounted() >= calls + 1, `forwarded + dropped to reach ${calls + 1}`, 20_000, 100).catch(
      (err: Error) => {
        const seen = `forwarded ${forwarded}, dropped ${dropped}, warnings ${JSON.stringify(warnings)}`;
        throw new Error(`${err.message}: ${seen}`);
      },
    );
    assert.ok(accounted() <= calls + warmUp, `no more than were sent: ${accounted()} of ${calls + warmUp}`);
    assert.ok(dropped > 0, 'the flood was limited');
    assert.ok(forwarded >= LOG_BURST, `the burst (${LOG_BURST}) went through: ${forwarded}`);
    report('log-rate-limit', { calls, forwarded, dropped, warnings: warnings.length });
    await listener.close();
    await caller.close();
  });

  it('binds a session to its identity: a client named "operator" cannot use the operator\'s session', async () => {
    if (!tokens.operator) {
      // Where the registry reserves the name, the impostor's definition is refused and it gets no token.
      assert.match(refused.operator, /reserved|No client named 'operator'/);
      report('session-identity', { impostorToken: false });
      return;
    }
    const asOperator = new RawHttp(broker.port, broker.token);
    const impostor = new RawHttp(broker.port, tokens.operator);
    const own = new RawSession(asOperator, 'real-operator');
    await own.initialize();
    const headers = own.headers();
    const tries: Record<string, number> = {};
    const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const attempts = [
      ['POST', list],
      ['DELETE', undefined],
      ['GET', undefined],
    ] as const;
    for (const [method, body] of attempts) {
      const accept = method === 'GET' ? 'text/event-stream' : 'application/json, text/event-stream';
      const res = await impostor.request({ method, body, headers: { ...headers, accept } });
      tries[method] = res.status;
    }
    assert.deepEqual(tries, { POST: 403, DELETE: 403, GET: 403 });
    const intact = await own.post({ jsonrpc: '2.0', id: 2, method: 'ping' });
    assert.equal(intact.status, 200, "the operator's session is intact");
    // And the other way round: the operator cannot be handed the impostor's session either.
    const theirs = new RawSession(impostor, 'impostor');
    await theirs.initialize();
    const ping = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping' });
    const res = await asOperator.request({ body: ping, headers: theirs.headers() });
    assert.equal(res.status, 403);
    asOperator.close();
    impostor.close();
    report('session-identity', { impostorToken: true, ...tries });
  });
});

describe("faults: the endpoint's cap on all sessions (lowered limits)", function () {
  this.timeout(60_000);
  let endpoint: Endpoint;

  before(async () => {
    endpoint = await endpointServingNothing(['a', 'b', 'c'], { sessionLimits: { perClient: 3, total: 4 } });
  });

  after(async () => {
    await endpoint?.close();
  });

  it('closes the oldest idle session of anyone at the cap; when every session is in use, refuses (503)', async () => {
    const clients: RawHttp[] = [];
    const open = async (token: string, name: string) => {
      const rawHttp = new RawHttp(endpoint.port, token);
      clients.push(rawHttp);
      const s = new RawSession(rawHttp, name);
      await s.initialize();
      return s;
    };
    const streams = new http.Agent({ keepAlive: false, maxSockets: 16 });
    const held: http.ClientRequest[] = [];
    try {
      const a0 = await open('token-a', 'a0');
      const others = [await open('token-a', 'a1'), await open('token-a', 'a2'), await open('token-b', 'b0')];
      assert.equal(endpoint.sessionCount, 4);
      const b1 = await open('token-b', 'b1');
      assert.equal(endpoint.sessionCount, 4, 'one session made room');
      assert.equal((await a0.post({ jsonrpc: '2.0', id: 'p', method: 'ping' })).status, 404, 'the oldest idle one');
      for (const s of [...others, b1]) {
        const { status, req } = await openStream(endpoint.port, s.http.token!, s.sessionId!, streams);
        held.push(req);
        assert.equal(status, 200);
      }
      const init = JSON.stringify({
        jsonrpc: '2.0',
        id: 'full',
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      });
      const c = new RawHttp(endpoint.port, 'token-c');
      clients.push(c);
      const res = await c.request({ body: init });
      assert.equal(res.status, 503, res.body);
      const error = JSON.parse(res.body) as Json;
      assert.equal(error.id, 'full');
      assert.match(error.error.message, /limit of 4 open sessions and all of them are in use.*DELETE/);
      assert.equal(endpoint.sessionCount, 4);
      report('session-cap-total', { total: 4, evictedOldestIdle: 1, refused: 503 });
    } finally {
      for (const req of held) req.destroy();
      streams.destroy();
      for (const c of clients) c.close();
    }
  });
});
