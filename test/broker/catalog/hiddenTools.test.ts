// Tools a definition's allowedTools / excludeTools keep from clients are still reported to the
// operator, with the rule that hides each, so a missing tool is explained instead of absent.
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  fixtureServer,
  waitFor,
  type BrokerProcess,
  status,
  startOperatorBroker,
  stopBroker,
} from '../../helpers/broker';

type Json = Record<string, any>;

describe('hidden tools in the state', function () {
  this.timeout(60_000);
  let broker: BrokerProcess;
  let operator: Client;

  before(async () => {
    ({ broker, operator } = await startOperatorBroker('sb-hidden-', {
      'mcp-servers.d/echo.yaml': fixtureServer('echo', 'echo.mjs', [], 'excludeTools: ["who*"]\n'),
      'mcp-servers.d/only.yaml': fixtureServer('only', 'echo.mjs', [], 'allowedTools: [echo]\n'),
    }));
  });

  after(() => stopBroker(broker, [operator]));

  async function running(name: string): Promise<Json> {
    return waitFor(async () => {
      const s = await status(operator, name);
      // Running, and its lists in the catalog (the catalog is rebuilt just after the state changes).
      return s.state === 'running' && s.tools.length > 0 ? s : undefined;
    }, `${name} running`);
  }

  it('names the excludeTools glob that hides a tool, and keeps it out of the served list', async () => {
    const s = await running('echo');
    assert.deepEqual(
      s.hiddenTools.map((t: Json) => [t.name, t.why]),
      [['whoami', "hidden by excludeTools 'who*'"]],
    );
    assert.ok(!s.tools.some((t: Json) => t.name === 'whoami'));
    assert.ok(
      s.tools.some((t: Json) => t.name === 'echo' && t.exposedAs === 'echo__echo'),
      JSON.stringify(s.tools),
    );
    const listed = (await operator.listTools()).tools.map((t) => t.name);
    assert.ok(!listed.includes('echo__whoami'));
  });

  it('says a tool is not matched by allowedTools', async () => {
    const s = await running('only');
    assert.deepEqual(
      s.tools.map((t: Json) => t.exposedAs),
      ['only__echo'],
    );
    assert.ok(s.hiddenTools.length > 0);
    for (const t of s.hiddenTools) assert.equal(t.why, 'not matched by allowedTools (echo)', t.name);
  });
});
