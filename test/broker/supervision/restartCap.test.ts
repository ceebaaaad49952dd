// restart.maxPerHour: a server that comes up and drops again, for ever, never trips maxRetries (its
// crash count resets once it was up); the broker's own restarts are capped per hour as well, so it
// ends failed, saying why, instead of retrying all day (a vendor suspended a peer's users for that).
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  fixtureServer,
  status,
  waitFor,
  type BrokerProcess,
  startOperatorBroker,
  stopBroker,
} from '../../helpers/broker';

type Json = Record<string, any>;

describe('the cap on automatic restarts per hour', function () {
  this.timeout(90_000);
  let broker: BrokerProcess;
  let operator: Client;

  before(async () => {
    // Up, answers one call, exits: with resetAfterMs 0 every loss starts the crash count afresh.
    const policy = (perHour: number) =>
      `restart: { maxRetries: 3, backoffMs: 10, maxBackoffMs: 20, resetAfterMs: 0, maxPerHour: ${perHour} }\n`;
    ({ broker, operator } = await startOperatorBroker('sb-restartcap-', {
      'mcp-servers.d/flaky.yaml': fixtureServer('flaky', 'crashy.mjs', ['--fail-after', '1'], policy(3)),
      'mcp-servers.d/control.yaml': fixtureServer('control', 'crashy.mjs', ['--fail-after', '1'], policy(100)),
    }));
  });

  after(() => stopBroker(broker, [operator]));

  /** Drops the server `times` times (one call each, once it is running again); its status after. */
  async function dropRepeatedly(name: string, times: number): Promise<Json> {
    for (let i = 0; i < times; i++) {
      await waitFor(async () => (await status(operator, name)).state === 'running', `${name} running`, 20_000);
      await operator.callTool({ name: `${name}__ok`, arguments: {} });
      await waitFor(async () => (await status(operator, name)).state !== 'running', `${name} to drop`, 20_000);
    }
    return waitFor(
      async () => {
        const s = await status(operator, name);
        return s.state === 'failed' || s.state === 'running' ? s : undefined;
      },
      `${name} to settle`,
      20_000,
    );
  }

  it('stops after maxPerHour automatic restarts, though each restart came up fine', async () => {
    const flaky = await dropRepeatedly('flaky', 4);
    assert.equal(flaky.state, 'failed');
    assert.equal(flaky.restarts, 3);
    assert.match(flaky.lastError, /gave up: 3 automatic restarts in the last hour, restart\.maxPerHour/);
  });

  it('positive control: the same drops under a higher cap are restarted every time', async () => {
    const control = await dropRepeatedly('control', 5);
    assert.equal(control.state, 'running');
    assert.equal(control.restarts, 5);
  });
});
