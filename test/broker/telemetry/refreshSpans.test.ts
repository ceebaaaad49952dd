// A sign-in refresh in a span, through the real broker signed in to the loopback OAuth fixture (its
// access tokens live 2 s) and exporting to the loopback OTLP collector: the call that needed a new
// token holds the refresh as a child of its upstream request; no token is ever exported.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as readline from 'node:readline';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  connect,
  fixture,
  killStarted,
  removeTempDirs,
  startBrokerProcess,
  status,
  tempDir,
  textOf,
  track,
  waitFor,
  writeRegistry,
  type BrokerProcess,
} from '../../helpers/broker';
import { OtlpCollector } from '../../helpers/otlpCollector';

const CLIENT = 3;
const hexId = (bytes: number): string => randomBytes(bytes).toString('hex');

/** Plays the browser: the authorization URL, the consent page, then the redirect to the broker. */
async function consent(authorizationUrl: string): Promise<string> {
  const authorize = await fetch(authorizationUrl, { redirect: 'manual' });
  const consentPage = new URL(authorize.headers.get('location')!, authorizationUrl);
  consentPage.searchParams.set('decision', 'allow');
  const answered = await fetch(consentPage, { redirect: 'manual' });
  return (await fetch(new URL(answered.headers.get('location')!))).text();
}

describe('telemetry: a sign-in refresh is a span of the call that needed it', function () {
  this.timeout(120_000);
  const collector = new OtlpCollector();
  let oauth: { base: string; url: string };
  let broker: BrokerProcess;
  let operator: Client;

  before(async () => {
    const endpoint = await collector.start();
    const proc = track(spawn(process.execPath, [fixture('oauth-server.mjs'), '--token-ttl', '2'], { stdio: 'pipe' }));
    oauth = await new Promise((resolve, reject) => {
      readline.createInterface({ input: proc.stdout! }).once('line', (line) => resolve(JSON.parse(line)));
      proc.once('exit', (code) => reject(new Error(`oauth fixture exited with ${code}`)));
    });
    const root = tempDir('sb-otel-refresh-');
    writeRegistry(root, {
      'mcp-servers.d/remote.yaml':
        `name: remote\ntrust: trusted\ntransport: http\nurl: ${oauth.url}\n` +
        'auth:\n  type: oauth\n  scopes: [mcp]\n',
    });
    broker = await startBrokerProcess({
      root,
      env: { SWITCHBOARD_TOKEN_STORE: 'file', OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_BSP_SCHEDULE_DELAY: '50' },
    });
    operator = await connect(broker.url, broker.token, 'operator');
    const begun = await operator.callTool({ name: 'switchboard__begin_sign_in', arguments: { name: 'remote' } });
    assert.match(await consent((begun.structuredContent as { url: string }).url), /Signed in/);
    await waitFor(async () => (await status(operator, 'remote')).state === 'running', 'remote running', 20_000);
  });

  after(async () => {
    await operator?.close();
    await broker?.stop();
    await killStarted();
    await collector.stop();
    removeTempDirs();
  });

  it('the refresh is a child of the upstream request that needed the new token', async () => {
    // The refresh may be made by another request of the connection (its stream): a few rounds,
    // until one call's own request is the one that refreshed.
    let found = false;
    for (let round = 0; round < 8 && !found; round++) {
      await new Promise((r) => setTimeout(r, 2100)); // longer than the fixture's token lifetime
      const traceId = hexId(16);
      const result = await operator.callTool({
        name: 'remote__echo',
        arguments: { text: `round ${round}` },
        _meta: { traceparent: `00-${traceId}-${hexId(8)}-01` },
      });
      assert.equal(textOf(result), `echo: round ${round}`);
      const spans = await waitFor(
        () => {
          const inTrace = collector.spans.filter((s) => s.traceId === traceId);
          // The call's own CLIENT span: the refresh (CLIENT too) ends first and can go in an export of its own.
          return inTrace.some((s) => s.kind === CLIENT && s.name.startsWith('tools/call')) ? inTrace : undefined;
        },
        'the spans of the call',
        20_000,
      );
      const refresh = spans.find((s) => s.name === 'sign-in refresh');
      if (!refresh) continue;
      found = true;
      assert.equal(refresh.kind, CLIENT);
      assert.equal(refresh.attributes['switchboard.server'], 'remote');
      assert.equal(
        refresh.parentSpanId,
        spans.find((s) => s.kind === CLIENT && s.name.startsWith('tools/call'))!.spanId,
      );
    }
    assert.ok(found, "no round's call made the refresh itself");
    assert.ok(collector.spans.filter((s) => s.name === 'sign-in refresh').length >= 1);
  });

  it('exports no access or refresh token', async () => {
    const tokens = (await (await fetch(`${oauth.base}/test/tokens`)).json()) as { access: string[]; refresh: string[] };
    assert.ok(tokens.access.length > 1, 'tokens were refreshed (the search is not vacuous)');
    const bodies = collector.rawBodies.map((b) => b.toString('latin1'));
    assert.ok(
      bodies.some((b) => b.includes('sign-in refresh')),
      'positive control: the span was exported',
    );
    for (const token of [...tokens.access, ...tokens.refresh, broker.token]) {
      assert.ok(!bodies.some((b) => b.includes(token)), 'an exported body holds a token');
    }
  });
});
