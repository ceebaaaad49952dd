// The rule set and the limits in process: which rule decides (first match, globs, conditions that
// fail closed) and how limits count (sliding minute with a clock of the test's own, calls at once).
import assert from 'node:assert/strict';
import { PolicyDefSchema, type PolicyDef } from '../../../../src/registry/schema';
import { RuleSet } from '../../../../src/broker/trust/guardrails/ruleSet';
import { RateLimits } from '../../../../src/broker/trust/guardrails/rateLimits';

const policy = (name: string, body: Record<string, unknown>): PolicyDef => PolicyDefSchema.parse({ name, ...body });
const call = (tool: string, args: Record<string, unknown> = {}, client = 'agent', server = 'files') => ({
  client,
  server,
  tool,
  args,
});

describe('guardrail rule set', () => {
  const rules = new RuleSet(
    new Map([
      [
        'b-files',
        policy('b-files', {
          rules: [
            { name: 'docs', tools: ['write_*'], when: 'args.path.startsWith("docs/")', action: 'allow' },
            { name: 'big', tools: ['write_*'], when: 'size(args.content) > 10', action: 'ask' },
            { name: 'writes', tools: ['write_*'], action: 'deny', message: 'no' },
          ],
        }),
      ],
      ['a-first', policy('a-first', { rules: [{ name: 'bot', clients: ['bot-*'], action: 'deny' }] })],
    ]),
  );
  const decided = (c: ReturnType<typeof call>) => {
    const d = rules.decide(c);
    return d && `${d.policy}/${d.rule.name}${d.conditionError ? '!' : ''}`;
  };

  it('the first rule that matches decides, policies in name order', () => {
    assert.equal(decided(call('write_file', { path: 'docs/a', content: 'x'.repeat(50) })), 'b-files/docs');
    assert.equal(decided(call('write_file', { path: 'src/a', content: 'x'.repeat(50) })), 'b-files/big');
    assert.equal(decided(call('write_file', { path: 'src/a', content: 'x' })), 'b-files/writes');
    assert.equal(decided(call('write_file', { path: 'docs/a' }, 'bot-1')), 'a-first/bot');
    assert.equal(decided(call('read_file', { path: 'src/a' })), undefined);
  });

  it('a condition that cannot be evaluated never allows: it skips allow and matches ask or deny', () => {
    // No `path` nor `content`: docs (allow) cannot judge it and is skipped; big (ask) cannot either and decides.
    assert.equal(decided(call('write_file', {})), 'b-files/big!');
    // Positive control: with the fields there, the same rules judge normally.
    assert.equal(decided(call('write_file', { path: 'src/a', content: 'x' })), 'b-files/writes');
  });
});

describe('guardrail limits', () => {
  let now = 1_000_000;
  const limits = new RateLimits(() => now);
  limits.update(
    new Map([
      [
        'l',
        policy('l', {
          limits: [
            { name: 'per-client', tools: ['search'], per: 'client', callsPerMinute: 2 },
            { name: 'once', tools: ['build'], per: 'tool', concurrent: 1 },
          ],
        }),
      ],
    ]),
  );

  it('calls per minute: refused with the seconds until the oldest call leaves the window', () => {
    assert.ok('release' in limits.admit(call('search')));
    now += 10_000;
    assert.ok('release' in limits.admit(call('search')));
    const refused = limits.admit(call('search'));
    assert.ok('refused' in refused);
    assert.equal(refused.refused.retryAfterSeconds, 50);
    assert.ok('release' in limits.admit(call('search', {}, 'other')), 'another client has its own budget');
    now += 50_000;
    assert.ok('release' in limits.admit(call('search')), 'the first call left the window');
  });

  it('calls at once: shared by every client of the tool, given back once', () => {
    const first = limits.admit(call('build', {}, 'a'));
    assert.ok('release' in first);
    assert.ok('refused' in limits.admit(call('build', {}, 'b')));
    first.release();
    first.release();
    const second = limits.admit(call('build', {}, 'b'));
    assert.ok('release' in second);
    assert.ok('refused' in limits.admit(call('build', {}, 'c')), 'a second release gave nothing back twice');
  });
});
