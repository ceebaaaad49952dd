// A 2026-07-28 call parked on input_required is not kept forever: when its caller does not retry
// within `serve --park-timeout`, the broker cancels it upstream (the server hears
// notifications/cancelled) and its requestState is refused as expired. The positive control: a
// retry within the timeout completes, and nothing is cancelled.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
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
import { envelope, postStateless } from '../../helpers/stateless';

type Json = Record<string, unknown>;

describe('a call parked on input_required (serve --park-timeout)', function () {
  this.timeout(60_000);
  let broker: BrokerProcess;
  let nextId = 1;

  /** One 2026-07-28 POST as the operator; the JSON-RPC reply. */
  async function post(method: string, params: Json): Promise<{ result?: Json; error?: { message: string } }> {
    const message = { method, params: { ...params, _meta: envelope(CAPS) } };
    return (await postStateless({ port: broker.port, token: broker.token }, message, nextId++)).message;
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
