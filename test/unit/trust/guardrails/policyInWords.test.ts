// What the operator reads before approving a policy (switchboard policies approve): each rule and
// limit in one sentence, and what an approval changes against the version in force. And the counts a
// limit shows in the console: per budget, only what the last minute holds, per server.
import assert from 'node:assert/strict';
import { PolicyDefSchema, type PolicyDef } from '../../../../src/registry/schema';
import { policyChanges, policyInWords } from '../../../../src/broker/trust/guardrails/policyInWords';
import { RateLimits } from '../../../../src/broker/trust/guardrails/rateLimits';

const policy = (body: Record<string, unknown>): PolicyDef => PolicyDefSchema.parse({ name: 'p', ...body });

describe('a guardrail policy in words', () => {
  const def = policy({
    rules: [
      { name: 'a', servers: ['files', 'git*'], tools: ['write_*'], when: 'args.force', action: 'allow' },
      { name: 'b', clients: ['bot'], action: 'ask', message: 'The operator decides.' },
      { name: 'c', action: 'deny', message: 'Not here.' },
    ],
    limits: [{ name: 'l', servers: ['github'], per: 'tool', callsPerMinute: 30, concurrent: 2 }],
  });

  it('says each rule and limit: what it does to which calls, when, what the agent is told', () => {
    assert.deepEqual(policyInWords(def), [
      "rule 'a' allows calls to tool 'write_*' of servers 'files' or 'git*' from any client when args.force",
      "rule 'b' asks the operator in VS Code before calls to any tool of any server from client 'bot'; " +
        'the agent is told "The operator decides."',
      'rule \'c\' refuses calls to any tool of any server from any client; the agent is told "Not here."',
      "limit 'l' allows 30 calls per minute and 2 at once for each tool, counting calls to any tool of server 'github' from any client",
    ]);
  });

  it('says what an approval changes: new, changed, removed, a new order, or only the description', () => {
    assert.deepEqual(policyChanges(undefined, def), []);
    const edited = policy({
      rules: [def.rules[0], { ...def.rules[1], action: 'deny' }, { name: 'd', action: 'allow' }],
      limits: [],
    });
    assert.deepEqual(policyChanges(def, edited), [
      "changed rule 'b'",
      "new rule 'd'",
      "removed rule 'c'",
      "removed limit 'l'",
    ]);
    const reordered = policy({ rules: [def.rules[1], def.rules[0], def.rules[2]], limits: def.limits });
    assert.deepEqual(policyChanges(def, reordered), ['the rules are checked in a new order']);
    assert.deepEqual(policyChanges(def, policy({ ...def, description: 'now described' })), ['only the description']);
  });
});

describe('a limit’s counts now', () => {
  it('per budget, the calls of the last minute and in flight, for the server asked about', () => {
    let now = 0;
    const rates = new RateLimits(() => now);
    rates.update(
      new Map([
        [
          'p',
          policy({
            limits: [
              { name: 'per-client', per: 'client', callsPerMinute: 100 },
              { name: 'per-tool', per: 'tool', concurrent: 5 },
            ],
          }),
        ],
      ]),
    );
    const call = (client: string, server: string) => rates.admit({ client, server, tool: 't', args: {} });
    const running = call('alpha', 'one');
    call('alpha', 'two');
    call('beta', 'one');
    if ('release' in running) running.release();
    // A per-client budget counts every server's calls; a per-tool budget only its own server's.
    assert.deepEqual(rates.usage('p', 'per-client', 'one'), [
      { counted: "client 'alpha'", lastMinute: 2, inFlight: 1 },
      { counted: "client 'beta'", lastMinute: 1, inFlight: 1 },
    ]);
    assert.deepEqual(rates.usage('p', 'per-tool', 'two'), [
      { counted: 'every client on two__t', lastMinute: 1, inFlight: 1 },
    ]);
    now += 60_001;
    // The minute has passed: only the calls still running are shown, and an idle budget not at all.
    assert.deepEqual(rates.usage('p', 'per-tool', 'one'), [
      { counted: 'every client on one__t', lastMinute: 0, inFlight: 1 },
    ]);
    assert.deepEqual(rates.usage('p', 'nope', 'one'), []);
  });

  it('keeps counting right over minutes of calls (the window slides by index and is cut as it goes)', () => {
    let now = 0;
    const rates = new RateLimits(() => now);
    rates.update(new Map([['p', policy({ limits: [{ name: 'busy', per: 'client', callsPerMinute: 600 }] })]]));
    const call = () => rates.admit({ client: 'alpha', server: 's', tool: 't', args: {} });
    // Ten calls a second for five minutes: a minute holds 600, never more, so none is refused.
    for (let second = 0; second < 300; second++, now = second * 1000)
      for (let i = 0; i < 10; i++) assert.ok('release' in call(), `refused at ${second} s`);
    now = 299_000;
    assert.deepEqual(rates.usage('p', 'busy', 's'), [{ counted: "client 'alpha'", lastMinute: 600, inFlight: 3000 }]);
    const refused = call();
    assert.ok('refused' in refused && refused.refused.retryAfterSeconds === 1, JSON.stringify(refused));
  });
});
