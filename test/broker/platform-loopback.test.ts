// A client given http://localhost:<port>/mcp reaches the broker whether its resolver says 127.0.0.1
// or ::1 first (macOS, newer Node): the endpoint answers on both loopback addresses at one port.
import assert from 'node:assert/strict';
import * as net from 'node:net';
import { connect, removeTempDirs, startBrokerProcess, tempDir, type BrokerProcess } from '../helpers/broker';

function ipv6LoopbackUsable(): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen({ port: 0, host: '::1', ipv6Only: true }, () => probe.close(() => resolve(true)));
  });
}

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

  it('serves a client whose resolver put ::1 first, at http://[::1]:<port>/mcp', async function () {
    // This host must have an IPv6 loopback for the check to mean anything; the CI hosts all do.
    assert.ok(await ipv6LoopbackUsable(), 'this machine has no IPv6 loopback (::1)');
    const client = await connect(`http://[::1]:${broker.port}/mcp`, broker.token);
    const tools = await client.listTools();
    assert.ok(tools.tools.some((t) => t.name.startsWith('switchboard__')));
    await client.close();
  });
});
