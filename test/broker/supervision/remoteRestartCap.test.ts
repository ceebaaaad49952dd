// restart.maxPerHour against a REMOTE Streamable HTTP server: one that goes away (its port closed)
// and one that answers every request with HTTP 503. The broker reconnects, counts each reconnect
// against the cap, stops at the cap saying so in its status, sends the server nothing more, and
// connects again once the operator restarts it by hand (not counted). The remote is a real node:http
// server in this process serving the SDK's Streamable HTTP transport, started and stopped by the test.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import {
  connect,
  facade,
  removeTempDirs,
  startBrokerProcess,
  status,
  tempDir,
  waitFor,
  writeRegistry,
  type BrokerProcess,
} from '../../helpers/broker';

type Json = Record<string, any>;

/** A remote MCP server the test can take down (port closed), make answer 503, and bring back. */
class Remote {
  /** up: serves MCP. failing: every request gets HTTP 503. */
  mode: 'up' | 'failing' = 'up';
  /** While above 0: this many more requests get HTTP 503, then it serves again by itself. */
  failNext = 0;
  /** Requests that reached it while it was failing (each reconnect attempt sends at least one). */
  failedRequests = 0;
  private server?: http.Server;
  private readonly sessions = new Map<string, StreamableHTTPServerTransport>();
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}/mcp`;
  }

  async start(): Promise<void> {
    const server = http.createServer((req, res) => {
      this.handle(req, res).catch(() => {
        if (!res.headersSent) res.writeHead(500).end();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', resolve);
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Down: the port refuses connections, and every open one (a session's stream) is cut. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
    for (const transport of this.sessions.values()) await transport.close().catch(() => undefined);
    this.sessions.clear();
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (this.mode === 'failing' || this.failNext > 0) {
      if (this.failNext > 0) this.failNext--;
      this.failedRequests++;
      req.resume();
      res.writeHead(503, { 'content-type': 'text/plain' }).end('upstream unavailable');
      return;
    }
    const sid = req.headers['mcp-session-id'];
    const existing = typeof sid === 'string' ? this.sessions.get(sid) : undefined;
    if (existing) return existing.handleRequest(req, res);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      body = undefined;
    }
    if (sid || req.method !== 'POST' || !isInitializeRequest(body)) {
      res.writeHead(sid ? 404 : 400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'No session' }, id: null }));
      return;
    }
    const mcp = new McpServer({ name: 'remote', version: '1.0.0' });
    mcp.registerTool('ok', { description: 'Answers ok' }, async () => ({ content: [{ type: 'text', text: 'ok' }] }));
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void this.sessions.set(id, transport),
    });
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
    };
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body);
  }
}

const CAP = 3;
// Many consecutive failures allowed, and no reset by uptime: the hourly cap is what stops it.
const RESTART = `restart: { maxRetries: 50, backoffMs: 10, maxBackoffMs: 20, resetAfterMs: 0, maxPerHour: ${CAP} }\n`;

describe('the cap on reconnects to a remote Streamable HTTP server that is down or answers 5xx', function () {
  this.timeout(120_000);
  let broker: BrokerProcess;
  let operator: Client;
  const gone = new Remote();
  const failing = new Remote();
  const flaky = new Remote();

  before(async () => {
    await gone.start();
    await failing.start();
    await flaky.start();
    const root = tempDir('sb-remotecap-');
    const remote = (name: string, r: Remote) =>
      `name: ${name}\ntrust: trusted\ntransport: http\nurl: ${r.url}\n${RESTART}`;
    writeRegistry(root, {
      'mcp-servers.d/gone.yaml': remote('gone', gone),
      'mcp-servers.d/failing.yaml': remote('failing', failing),
      'mcp-servers.d/flaky.yaml': remote('flaky', flaky).replace(`maxPerHour: ${CAP}`, 'maxPerHour: 100'),
    });
    broker = await startBrokerProcess({ root });
    operator = await connect(broker.url, broker.token, 'operator');
    for (const name of ['gone', 'failing', 'flaky'])
      await waitFor(async () => (await status(operator, name)).state === 'running', `${name} running`, 30_000);
  });

  after(async () => {
    await operator?.close().catch(() => undefined);
    await broker?.stop();
    await gone.stop();
    await failing.stop();
    await flaky.stop();
    removeTempDirs();
  });

  /** A call on the lost server makes the broker find the connection lost; then its status once it settles. */
  async function loseAndSettle(name: string): Promise<Json> {
    await operator.callTool({ name: `${name}__ok`, arguments: {} }).catch(() => undefined);
    return waitFor(
      async () => {
        const s = await status(operator, name);
        return s.state === 'failed' ? s : undefined;
      },
      `${name} to give up`,
      60_000,
    );
  }

  /** The operator restarts it by hand once it is back: connected again, and the call answers. */
  async function restartByHand(name: string, before: Json): Promise<void> {
    await facade(operator, 'restart_server', { name });
    const s = await waitFor(async () => {
      const now = await status(operator, name);
      return now.state === 'running' ? now : undefined;
    }, `${name} running again`);
    assert.equal(s.restarts, before.restarts, 'a restart by hand is not counted against the cap');
    const result = await operator.callTool({ name: `${name}__ok`, arguments: {} });
    assert.deepEqual(result.content, [{ type: 'text', text: 'ok' }]);
  }

  it('a server whose port closed: tries maxPerHour times, then stops and says so', async () => {
    await gone.stop();
    const s = await loseAndSettle('gone');
    assert.equal(s.restarts, CAP);
    assert.equal(s.nextRestartInMs, undefined, 'no reconnect is scheduled');
    assert.match(s.lastError, new RegExp(`gave up: ${CAP} automatic restarts in the last hour, restart\\.maxPerHour`));
    assert.match(s.lastError, /ECONNREFUSED|fetch failed|connection failed/);

    // Back on the same port: it stays failed until the operator acts, then resumes.
    await gone.start();
    assert.equal((await status(operator, 'gone')).state, 'failed');
    await restartByHand('gone', s);
  });

  it('a server answering 503: the same cap, and nothing more is sent to it once it stopped', async () => {
    failing.mode = 'failing';
    const s = await loseAndSettle('failing');
    assert.equal(s.restarts, CAP);
    assert.equal(s.nextRestartInMs, undefined);
    assert.match(s.lastError, /gave up: 3 automatic restarts in the last hour/);
    assert.match(s.lastError, /503/);
    const sent = failing.failedRequests;
    // Each of the CAP reconnects and the first loss reached the server; none after the broker gave up.
    assert.ok(sent >= CAP + 1, `requests while failing: ${sent}`);
    for (let i = 0; i < 3; i++) assert.equal((await status(operator, 'failing')).state, 'failed');
    assert.equal(failing.failedRequests, sent, 'no request after the broker gave up');

    failing.mode = 'up';
    await restartByHand('failing', s);
  });

  it('after the restart by hand, a loss within the same hour gives up at once (the hour still counts)', async () => {
    failing.mode = 'failing';
    const s = await loseAndSettle('failing');
    assert.equal(s.restarts, CAP, 'no further automatic reconnect within the hour');
    assert.match(s.lastError, /gave up: 3 automatic restarts in the last hour/);
    failing.mode = 'up';
    await restartByHand('failing', s);
  });

  it('positive control: under a higher cap the broker reconnects by itself once the remote answers again', async () => {
    // A few 503s, then the remote serves again on its own: the broker's reconnects reach it.
    flaky.failNext = 4;
    await operator.callTool({ name: 'flaky__ok', arguments: {} }).catch(() => undefined);
    const s = await waitFor(
      async () => {
        const now = await status(operator, 'flaky');
        return now.state === 'running' && now.restarts > 0 ? now : undefined;
      },
      'flaky reconnected by itself',
      60_000,
    );
    assert.ok(s.restarts >= 1 && s.restarts <= 5, `restarts: ${s.restarts}`);
    const result = await operator.callTool({ name: 'flaky__ok', arguments: {} });
    assert.deepEqual(result.content, [{ type: 'text', text: 'ok' }]);
  });
});
