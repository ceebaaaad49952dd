// A 2026-07-28 call parked on input_required is not kept forever: when its caller does not retry
// within `serve --park-timeout`, the broker cancels it upstream (the server hears
// notifications/cancelled) and its requestState is refused as expired. The positive control: a
// retry within the timeout completes, and nothing is cancelled.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as http from 'node:http';
import {
  BROKER_JS,
  fixtureServer,
  removeTempDirs,
  startBrokerProcess,
  tempDir,
  textOf,
  waitFor,
  writeRegistry,
  type BrokerProcess,
} from '../../helpers/broker';

type Json = Record<string, unknown>;
const V = '2026-07-28';

const envelope = (capabilities: Json = {}): Json => ({
  'io.modelcontextprotocol/protocolVersion': V,
  'io.modelcontextprotocol/clientCapabilities': capabilities,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
});

describe('a call parked on input_required (serve --park-timeout)', function () {
  this.timeout(60_000);
  let broker: BrokerProcess;
  let nextId = 1;

  /** One raw 2026-07-28 POST; the parsed JSON-RPC reply. */
  function post(method: string, params: Json): Promise<{ result?: Json; error?: { message: string } }> {
    const named = params.name;
    const body = JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params: { ...params, _meta: envelope(CAPS) } });
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port: broker.port,
          method: 'POST',
          path: '/mcp',
          headers: {
            authorization: `Bearer ${broker.token}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': V,
            'mcp-method': method,
            ...(typeof named === 'string' ? { 'mcp-name': named } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  const CAPS = { elicitation: { form: {} } };
  const elicit = (message: string, extra: Json = {}): Promise<{ result?: Json; error?: { message: string } }> =>
    post('tools/call', { name: 'asks__elicit', arguments: { message }, ...extra });
  const cancelledUpstream = async (): Promise<number> =>
    Number(textOf((await post('tools/call', { name: 'asks__cancelled', arguments: {} })).result));

  before(async () => {
    const root = tempDir('sb-park-');
    writeRegistry(root, { 'mcp-servers.d/asks.yaml': fixtureServer('asks', 'asks-client.mjs') });
    broker = await startBrokerProcess({ root, args: ['--park-timeout', '1'] });
    await waitFor(
      async () => (await post('tools/list', {})).result !== undefined && (await cancelledUpstream()) === 0,
      'asks running',
    );
  });

  after(async () => {
    await broker?.stop();
    removeTempDirs();
  });

  it('completes a retry that comes within the timeout, and cancels nothing (the positive control)', async () => {
    const parked = (await elicit('In time?')).result!;
    assert.equal(parked.resultType, 'input_required', JSON.stringify(parked));
    const [key] = Object.keys(parked.inputRequests as Json);
    const done = await elicit('In time?', {
      requestState: parked.requestState,
      inputResponses: { [key]: { action: 'accept', content: { answer: 'yes' } } },
    });
    assert.equal(done.result?.resultType, 'complete', JSON.stringify(done));
    assert.deepEqual(JSON.parse(textOf(done.result)), { action: 'accept', content: { answer: 'yes' } });
    assert.equal(await cancelledUpstream(), 0);
  });

  it('cancels a call whose caller never retries, upstream too, and refuses its requestState afterwards', async () => {
    const parked = (await elicit('Abandoned?')).result!;
    assert.equal(parked.resultType, 'input_required', JSON.stringify(parked));
    // The server hears the cancellation: the call no longer holds its work or the broker's memory.
    await waitFor(async () => (await cancelledUpstream()) === 1, 'the upstream to hear the parked call cancelled');
    const [key] = Object.keys(parked.inputRequests as Json);
    const late = await elicit('Abandoned?', {
      requestState: parked.requestState,
      inputResponses: { [key]: { action: 'accept', content: { answer: 'too late' } } },
    });
    assert.match(late.error?.message ?? JSON.stringify(late), /requestState is unknown or expired/);
  });

  it('refuses a park timeout of 0 seconds with a clear error (it would cancel every question as it is asked)', () => {
    const root = tempDir('sb-park0-');
    const out = spawnSync(process.execPath, [BROKER_JS, 'serve', '--root', root, '--park-timeout', '0'], {
      encoding: 'utf8',
      env: { ...process.env, SWITCHBOARD_HOME: tempDir('sb-park0-home-') },
      timeout: 20_000,
    });
    assert.notEqual(out.status, 0);
    assert.match(out.stderr, /--park-timeout must be at least 1 second, got '0'/);
  });
});
