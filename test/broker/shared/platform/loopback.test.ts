// A client given http://localhost:<port>/mcp reaches the broker whether its resolver says 127.0.0.1
// or ::1 first (macOS, newer Node): the endpoint binds 127.0.0.1 only, and clients fall back to it.
import assert from 'node:assert/strict';
import * as net from 'node:net';
import { connect, removeTempDirs, startBrokerProcess, tempDir, type BrokerProcess } from '../../../helpers/broker';

describe('platform: loopback names', function () {
  this.timeout(30_000);
  let broker: BrokerProcess;

  before(async () => {
    broker = await startBrokerProcess({ root: tempDir('sb-loopback-') });
  });
  after(async () => {
    await broker?.stop();
    removeTempDirs();
  });

  it('prints its URL with 127.0.0.1, never a name that may resolve elsewhere', () => {
    assert.match(broker.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  });

  it('serves a real MCP client at http://localhost:<port>/mcp', async () => {
    const client = await connect(`http://localhost:${broker.port}/mcp`, broker.token);
    const tools = await client.listTools();
    assert.ok(tools.tools.some((t) => t.name.startsWith('switchboard__')));
    await client.close();
  });

  it('is reached by a client whose resolver puts ::1 first (macOS): it falls back to 127.0.0.1', async () => {
    // The endpoint listens on 127.0.0.1 only. A resolver answering ::1 first is what macOS does for
    // localhost; Node's clients try each address in turn (autoSelectFamily), so they land on 127.0.0.1.
    const lookup: net.LookupFunction = (_host, _opts, callback) =>
      (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [
        { address: '::1', family: 6 },
        { address: '127.0.0.1', family: 4 },
      ]);
    const status = await new Promise<string>((resolve, reject) => {
      const socket = net.connect({ host: 'localhost', port: broker.port, lookup, autoSelectFamily: true }, () => {
        socket.write(`GET /health HTTP/1.1\r\nHost: localhost:${broker.port}\r\nConnection: close\r\n\r\n`);
      });
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (text += chunk));
      socket.on('end', () => resolve(text.split('\r\n', 1)[0]));
      socket.on('error', reject);
    });
    assert.equal(status, 'HTTP/1.1 200 OK');
  });
});
