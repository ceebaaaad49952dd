// The Guardrails tab's rows: each rule and limit that applies to the server in words with its source
// file and a limit's counts now, and the recent calls to that server a guardrail decided (from the
// audit), newest first, the limit named when a limit refused a call a rule had let through.
import assert from 'node:assert/strict';
import type { AuditRecord, ServerGuardrail } from '../../src/broker/control/controlApi';
import { decisionRows, ruleRows } from '../../webview/guardrailRows';

describe('guardrail rows', () => {
  const guardrails: ServerGuardrail[] = [
    {
      policy: 'files',
      name: 'writes-under-docs',
      action: 'allow',
      tools: ['write_file'],
      when: 'args.path.startsWith("docs/")',
    },
    { policy: 'files', name: 'confirm-deletes', action: 'ask', tools: ['delete_*'], clients: ['copilot'] },
    { policy: 'files', name: 'no-other-writes', action: 'deny' },
    {
      policy: 'limits',
      name: 'searches',
      action: 'limit',
      detail: '30/min, per client',
      usage: [{ counted: "client 'copilot'", lastMinute: 4, inFlight: 1 }],
    },
    { policy: 'limits', name: 'idle', action: 'limit', detail: '1 at once, per tool' },
  ];

  it('says each rule and limit: what it applies to, its condition or budget, counts, source file', () => {
    const rows = ruleRows(guardrails);
    assert.deepEqual(rows[0], {
      name: 'writes-under-docs',
      action: 'allow',
      applies: 'tools write_file',
      condition: 'when args.path.startsWith("docs/")',
      counts: '',
      source: 'policies.d/files.yaml',
    });
    assert.equal(rows[1].applies, 'tools delete_* · clients copilot');
    assert.equal(rows[2].applies, 'every call');
    assert.equal(rows[2].condition, '');
    assert.equal(rows[3].condition, '30/min, per client');
    assert.equal(rows[3].counts, "client 'copilot': 4 in the last minute, 1 running");
    assert.equal(rows[3].source, 'policies.d/limits.yaml');
    assert.equal(rows[4].counts, '');
    assert.deepEqual(ruleRows(undefined), []);
  });

  it('lists the calls to this server a rule or limit decided, newest first', () => {
    const at = (s: number) => `2026-12-05T10:00:0${s}Z`;
    const call = { event: 'call', server: 'files', client: 'agent' };
    const entries: AuditRecord[] = [
      { ...call, at: at(1), tool: 'write_file', rule: 'files/writes-under-docs', ruleAction: 'allow' },
      {
        ...call,
        at: at(2),
        tool: 'write_file',
        rule: 'files/no-other-writes',
        ruleAction: 'deny',
        outcome: 'error',
        code: -32003,
      },
      {
        ...call,
        at: at(3),
        tool: 'delete_file',
        rule: 'files/confirm-deletes',
        ruleAction: 'ask',
        operatorAnswer: 'accept',
      },
      {
        ...call,
        at: at(4),
        tool: 'delete_file',
        rule: 'files/confirm-deletes',
        ruleAction: 'ask',
        operatorAnswer: 'no-editor',
      },
      {
        ...call,
        at: at(5),
        tool: 'search',
        rule: 'files/writes-under-docs',
        ruleAction: 'allow',
        rateLimited: 'limits/searches',
      },
      // Not decided by a guardrail, another server, not a call: left out.
      { ...call, at: at(6), tool: 'read_file' },
      { ...call, at: at(7), server: 'git', tool: 'status', rule: 'g/r', ruleAction: 'deny' },
      { at: at(8), event: 'policy', policy: 'files' },
      {
        at: at(9),
        event: 'call',
        server: 'files',
        operator: true,
        tool: 'write_file',
        rule: 'files/writes-under-docs',
        ruleAction: 'allow',
      },
    ];
    const rows = decisionRows(entries, 'files');
    assert.deepEqual(
      rows.map((r) => [r.rule, r.decision, r.client, r.tool]),
      [
        ['files/writes-under-docs', 'allow', 'operator', 'write_file'],
        ['limits/searches', 'over limit', 'agent', 'search'],
        ['files/confirm-deletes', 'ask: refused', 'agent', 'delete_file'],
        ['files/confirm-deletes', 'ask: accepted', 'agent', 'delete_file'],
        ['files/no-other-writes', 'deny', 'agent', 'write_file'],
        ['files/writes-under-docs', 'allow', 'agent', 'write_file'],
      ],
    );
    assert.equal(rows[5].at, at(1));
    assert.equal(decisionRows(entries, 'files', 2).length, 2);
  });
});
