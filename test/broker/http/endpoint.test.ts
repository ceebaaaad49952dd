// The endpoint's front door: tokens, Host/Origin, body limits and JSON-RPC errors, over raw HTTP.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import {
  connect,
  fixtureServer,
  waitFor,
  removeTempDirs,
  startBrokerProcess,
  tempDir,
  textOf,
  writeRegistry,
  type BrokerProcess,
} from '../../helpers/broker';

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A raw request, so headers like Host can be set to what an attacker would send. */
function raw(
  port: number,
  opts: { method?: string; path?: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method: opts.method ?? 'POST', path: opts.path ?? '/mcp', headers: opts.headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    req.on('error', reject);
    if (opts.body !== undefined) req.end(opts.body);
    else req.end();
  });
}

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

describe('session eviction', function () {
  this.timeout(30_000);
  after(() => removeTempDirs());

  it('evicts a session that went quiet, and the client can start a new one', async () => {
    const root = tempDir('sb-evict-');
    const b = await startBrokerProcess({ root, args: ['--session-idle', '1'] });
    const base = {
      host: `127.0.0.1:${b.port}`,
      authorization: `Bearer ${b.token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };
    const init = await raw(b.port, { headers: base, body: INIT });
    const sid = init.headers['mcp-session-id'] as string;
    const ping = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' });
    assert.equal((await raw(b.port, { headers: { ...base, 'mcp-session-id': sid }, body: ping })).status, 200);
    await new Promise((r) => setTimeout(r, 3000)); // quiet for three idle periods
    assert.equal(
      (await raw(b.port, { headers: { ...base, 'mcp-session-id': sid }, body: ping })).status,
      404,
      'the quiet session was evicted',
    );
    assert.equal((await raw(b.port, { headers: base, body: INIT })).status, 200);
    await b.stop();
  });
});

describe('endpoint', function () {
  this.timeout(60_000);
  let broker: BrokerProcess;
  let headers: Record<string, string>;

  before(async () => {
    const root = tempDir('sb-ep-');
    writeRegistry(root, { 'mcp-servers.d/echo.yaml': fixtureServer('echo', 'echo.mjs') });
    broker = await startBrokerProcess({ root });
    headers = {
      host: `127.0.0.1:${broker.port}`,
      authorization: `Bearer ${broker.token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };
  });

  after(async () => {
    await broker?.stop();
    removeTempDirs();
  });

  async function session(): Promise<string> {
    const r = await raw(broker.port, { headers, body: INIT });
    assert.equal(r.status, 200, r.body);
    return r.headers['mcp-session-id'] as string;
  }

  it('listens on the loopback interface only', () => {
    const lines = fs.readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1).filter(Boolean);
    const hex = broker.port.toString(16).toUpperCase().padStart(4, '0');
    const ours = lines.map((l) => l.trim().split(/\s+/)).filter((f) => f[1].endsWith(`:${hex}`) && f[3] === '0A');
    assert.ok(ours.length >= 1, 'the listening socket is found');
    for (const f of ours) assert.equal(f[1].split(':')[0], '0100007F', 'bound to 127.0.0.1');
    const v6 = fs.existsSync('/proc/net/tcp6') ? fs.readFileSync('/proc/net/tcp6', 'utf8') : '';
    assert.ok(
      !v6.split('\n').some((l) => l.includes(`:${hex} `) && l.trim().split(/\s+/)[3] === '0A'),
      'no IPv6 listener',
    );
  });

  it('refuses requests without a token (401) or with a wrong one', async () => {
    const { authorization: _a, ...anonymous } = headers;
    const none = await raw(broker.port, { headers: anonymous, body: INIT });
    assert.equal(none.status, 401);
    assert.match(none.headers['www-authenticate'] as string, /Bearer/);
    assert.match(JSON.parse(none.body).error.message, /Authorization: Bearer/);
    const wrong = await raw(broker.port, {
      headers: { ...headers, authorization: 'Bearer not-the-token' },
      body: INIT,
    });
    assert.equal(wrong.status, 401);
    assert.ok(!wrong.body.includes(broker.token));
  });

  it('refuses a foreign Host or Origin (DNS rebinding) with 403', async () => {
    for (const host of ['evil.example', `evil.example:${broker.port}`, `127.0.0.1:${broker.port + 1}`, '127.0.0.1']) {
      const r = await raw(broker.port, { headers: { ...headers, host }, body: INIT });
      assert.equal(r.status, 403, host);
    }
    for (const origin of ['https://evil.example', 'http://127.0.0.1.evil.example', 'null']) {
      const r = await raw(broker.port, { headers: { ...headers, origin }, body: INIT });
      assert.equal(r.status, 403, origin);
    }
    const local = await raw(broker.port, {
      headers: { ...headers, host: `localhost:${broker.port}`, origin: 'http://localhost:3000' },
      body: INIT,
    });
    assert.equal(local.status, 200);
  });

  it('refuses oversized bodies with 413, declared or streamed', async () => {
    // A raw socket: the broker answers and closes before the body is sent, which a normal HTTP
    // client would report as EPIPE instead of showing the status.
    const statusOf = (head: string, body: (s: net.Socket) => void) =>
      new Promise<number>((resolve, reject) => {
        const socket = net.connect(broker.port, '127.0.0.1', () => {
          socket.write(head);
          body(socket);
        });
        let text = '';
        socket.on('data', (d) => {
          text += d.toString();
          const m = /^HTTP\/1\.1 (\d+)/.exec(text);
          if (m) {
            resolve(Number(m[1]));
            socket.destroy();
          }
        });
        socket.on('error', (e) => (text ? undefined : reject(e)));
      });
    const base =
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${broker.port}\r\nAuthorization: Bearer ${broker.token}\r\n` +
      'Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n';
    assert.equal(await statusOf(`${base}Content-Length: ${5 * 1024 * 1024}\r\n\r\n`, () => undefined), 413);
    const sid = await session();
    const chunked = `${base}Mcp-Session-Id: ${sid}\r\nTransfer-Encoding: chunked\r\n\r\n`;
    assert.equal(
      await statusOf(chunked, (s) => {
        const mb = Buffer.alloc(1024 * 1024, 'b');
        for (let i = 0; i < 5 && !s.destroyed; i++) s.write(`${mb.length.toString(16)}\r\n${mb}\r\n`);
      }),
      413,
    );
  });

  it('answers malformed messages with JSON-RPC errors', async () => {
    const sid = await session();
    const h = { ...headers, 'mcp-session-id': sid };
    const parse = await raw(broker.port, { headers: h, body: '{"jsonrpc": "2.0", ' });
    assert.equal(parse.status, 400);
    assert.equal(JSON.parse(parse.body).error.code, -32700);
    const invalid = await raw(broker.port, {
      headers: h,
      body: JSON.stringify({ jsonrpc: '1.0', id: 7, method: 'ping' }),
    });
    assert.equal(JSON.parse(invalid.body).error.code, -32600);
    assert.equal(JSON.parse(invalid.body).id, 7);
    const unknown = await raw(broker.port, {
      headers: h,
      body: JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'no/such/method' }),
    });
    assert.equal(unknown.status, 200);
    assert.equal(JSON.parse(unknown.body).error.code, -32601);
    const badParams = await raw(broker.port, {
      headers: h,
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 42 } }),
    });
    assert.equal(JSON.parse(badParams.body).error.code, -32602);
    const unknownTool = await raw(broker.port, {
      headers: h,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 10,
        method: 'tools/call',
        params: { name: 'nope__nope', arguments: {} },
      }),
    });
    assert.match(JSON.parse(unknownTool.body).error.message, /Unknown tool/);
    const empty = await raw(broker.port, { headers: h, body: '[]' });
    assert.equal(JSON.parse(empty.body).error.code, -32600);
    const type = await raw(broker.port, { headers: { ...h, 'content-type': 'text/plain' }, body: '{}' });
    assert.equal(type.status, 415);
    const accept = await raw(broker.port, { headers: { ...h, accept: 'text/html' }, body: '{}' });
    assert.equal(accept.status, 406);
    const version = await raw(broker.port, {
      headers: { ...h, 'mcp-protocol-version': '1999-01-01' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    assert.equal(version.status, 400);
    // The body is read before the refusal, so the error names the request (issue 30 item 3).
    assert.equal(JSON.parse(version.body).id, 1);
    const noSession = await raw(broker.port, {
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    assert.equal(noSession.status, 400);
    const staleSession = await raw(broker.port, {
      headers: { ...headers, 'mcp-session-id': 'not-a-session' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    assert.equal(staleSession.status, 404);
    const notFound = await raw(broker.port, { headers, path: '/other', body: INIT });
    assert.equal(notFound.status, 404);
  });

  it('answers a batch, and notifications with 202', async () => {
    const sid = await session();
    const h = { ...headers, 'mcp-session-id': sid };
    const note = await raw(broker.port, {
      headers: h,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    assert.equal(note.status, 202);
    const batch = await raw(broker.port, {
      headers: h,
      body: JSON.stringify([
        { jsonrpc: '2.0', id: 'a', method: 'ping' },
        { jsonrpc: '2.0', id: 'b', method: 'tools/list' },
      ]),
    });
    const replies = JSON.parse(batch.body) as { id: string }[];
    assert.deepEqual(replies.map((r) => r.id).sort(), ['a', 'b']);
  });

  it('keeps serving well-behaved clients after all of that, and closes a session on DELETE', async () => {
    const client = await connect(broker.url, broker.token);
    const r = await waitFor(
      () => client.callTool({ name: 'echo__echo', arguments: { text: 'still fine' } }),
      'echo to be up',
    );
    assert.equal(textOf(r), 'echo: still fine');
    await client.close();
    const sid = await session();
    const del = await raw(broker.port, { method: 'DELETE', headers: { ...headers, 'mcp-session-id': sid } });
    assert.equal(del.status, 200);
    const after = await raw(broker.port, {
      headers: { ...headers, 'mcp-session-id': sid },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    assert.equal(after.status, 404);
  });
});
