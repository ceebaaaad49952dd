// Guardrail limits through the real broker, with several real clients at once: calls per minute per
// client (the next call refused with -32006 and retryAfterSeconds, other clients unaffected), and
// calls at once per tool across clients (refused while full, admitted again once a call ends).
// Counts and errors are asserted, never timings.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  connect,
  facade,
  fixtureServer,
  removeTempDirs,
  startBrokerProcess,
  tempDir,
  waitFor,
  writeRegistry,
  type BrokerProcess,
} from '../../../helpers/broker';

type Json = Record<string, any>;

const LIMITS = `limits:
  - name: adds-per-client
    servers: [echo]
    tools: [add]
    per: client
    callsPerMinute: 5
  - name: slow-at-once
    servers: [slow]
    tools: [slow]
    per: tool
    concurrent: 2
`;

interface Outcome {
  ok: boolean;
  code?: number;
  message?: string;
  data?: Json;
}

async function outcome(run: () => Promise<unknown>): Promise<Outcome> {
  try {
    const result = (await run()) as Json;
    return { ok: result.isError !== true };
  } catch (err) {
    const e = err as { code?: number; message: string; data?: Json };
    return { ok: false, code: e.code, message: e.message, data: e.data };
  }
}

describe('guardrail limits', function () {
  this.timeout(120_000);
  let broker: BrokerProcess;
  const clients: Record<string, Client> = {};

  before(async () => {
    const root = tempDir('sb-rates-');
    writeRegistry(root, {
      'mcp-servers.d/echo.yaml': fixtureServer('echo', 'echo.mjs'),
      'mcp-servers.d/slow.yaml': fixtureServer('slow', 'slow.mjs'),
      'clients.d/alpha.yaml': 'name: alpha\n',
      'clients.d/beta.yaml': 'name: beta\n',
      'policies.d/limits.yaml': LIMITS,
    });
    broker = await startBrokerProcess({ root });
    const operator = await connect(broker.url, broker.token, 'operator-test');
    clients.operator = operator;
    await waitFor(
      async () => (await facade(operator, 'list_servers')).servers.every((s: Json) => s.state === 'running'),
      'echo and slow running',
      40_000,
    );
    for (const name of ['alpha', 'beta']) {
      const { tokenFile } = await facade(operator, 'client_connection', { name });
      clients[name] = await connect(broker.url, fs.readFileSync(tokenFile, 'utf8').trim(), name);
    }
    const listed = (await facade(operator, 'list_policies')).policies[0];
    await facade(operator, 'approve_policy', { name: 'limits', hash: listed.hash });
  });

  after(async () => {
    for (const client of Object.values(clients)) await client.close().catch(() => undefined);
    await broker?.stop();
    removeTempDirs();
  });

  it('calls per minute, per client: 8 concurrent calls of one client get 5 answers and 3 refusals', async () => {
    const add = (who: string) => () => clients[who].callTool({ name: 'echo__add', arguments: { a: 1, b: 1 } });
    const alpha = await Promise.all(Array.from({ length: 8 }, () => outcome(add('alpha'))));
    assert.equal(alpha.filter((o) => o.ok).length, 5);
    const refused = alpha.filter((o) => !o.ok);
    assert.equal(refused.length, 3);
    for (const r of refused) {
      assert.equal(r.code, -32006);
      assert.match(r.message!, /5 calls per minute are allowed for client 'alpha' \(limit 'adds-per-client'/);
      assert.equal(r.data?.kind, 'per-minute');
      assert.ok(r.data!.retryAfterSeconds >= 1 && r.data!.retryAfterSeconds <= 60, JSON.stringify(r.data));
    }
    // Another client has its own budget, spent the same way at the same time.
    const [beta, gamma] = await Promise.all([
      Promise.all(Array.from({ length: 6 }, () => outcome(add('beta')))),
      Promise.all(Array.from({ length: 6 }, () => outcome(add('operator')))),
    ]);
    assert.deepEqual([beta.filter((o) => o.ok).length, gamma.filter((o) => o.ok).length], [5, 5]);
    // The server's status shows the limit's counts now (the console's Guardrails tab): refusals not counted.
    const limit = (await facade(clients.operator, 'server_status', { name: 'echo' })).guardrails.find(
      (g: Json) => g.name === 'adds-per-client',
    );
    const usage = Object.fromEntries(limit.usage.map((u: Json) => [u.counted, [u.lastMinute, u.inFlight]]));
    assert.deepEqual(
      [usage["client 'alpha'"], usage["client 'beta'"]],
      [
        [5, 0],
        [5, 0],
      ],
    );
    // Positive control: a tool no limit names is never refused.
    const echoes = await Promise.all(
      Array.from({ length: 10 }, () =>
        outcome(() => clients.alpha.callTool({ name: 'echo__echo', arguments: { text: 'x' } })),
      ),
    );
    assert.ok(echoes.every((o) => o.ok));
  });

  it('calls at once, per tool: two run across clients, the third is refused, one ending admits the next', async () => {
    // A long call of slow__slow reports progress after each step: its first progress proves it was admitted.
    const start = (who: string): { admitted: Promise<Outcome | 'running'>; stop(): Promise<void> } => {
      const abort = new AbortController();
      let running!: (v: 'running') => void;
      const progressed = new Promise<'running'>((r) => (running = r));
      const done = outcome(() =>
        clients[who].callTool({ name: 'slow__slow', arguments: { steps: 100_000, delayMs: 20 } }, undefined, {
          signal: abort.signal,
          timeout: 600_000,
          onprogress: () => running('running'),
        }),
      );
      return {
        admitted: Promise.race([progressed, done]),
        stop: async () => {
          abort.abort();
          await done;
        },
      };
    };
    const first = start('alpha');
    const second = start('beta');
    assert.deepEqual(await Promise.all([first.admitted, second.admitted]), ['running', 'running']);
    const slow = (await facade(clients.operator, 'server_status', { name: 'slow' })).guardrails[0];
    assert.deepEqual(slow.usage, [{ counted: 'every client on slow__slow', lastMinute: 2, inFlight: 2 }]);
    const third = start('operator');
    const refused = (await third.admitted) as Outcome;
    assert.equal(refused.code, -32006);
    assert.equal(refused.data?.kind, 'concurrent');
    assert.match(refused.message!, /2 calls at once are allowed for every client on slow__slow/);
    await first.stop();
    // The slot is given back when the broker has seen the call end: the next start is admitted then.
    let next = start('operator');
    while ((await next.admitted) !== 'running') {
      await next.stop();
      next = start('operator');
    }
    await next.stop();
    await second.stop();
  });
});
