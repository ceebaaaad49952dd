// The upstream state machine (supervision/upstreamStates.ts): its moves and the predicates every
// other part asks. The Upstream itself is exercised by the broker suites, whose broker helper fails
// on any move this table does not declare.
import assert from 'node:assert/strict';
import {
  isHeld,
  isSettling,
  isUp,
  mayMove,
  needsAttention,
  UPSTREAM_STATES,
  waitsForPerson,
} from '../../../src/broker/supervision/upstreamStates';

describe('upstream states', () => {
  it('runs only through a start, and only a start in progress or a live server fails or waits', () => {
    for (const from of UPSTREAM_STATES) {
      if (from !== 'starting' && from !== 'running') assert.equal(mayMove(from, 'running'), false, `${from} → running`);
      for (const to of ['backoff', 'needs-sign-in', 'needs-input'] as const) {
        const may =
          from === 'starting' ||
          from === 'running' ||
          from === to ||
          ((from === 'needs-sign-in' || from === 'needs-input') && to !== 'backoff');
        assert.equal(mayMove(from, to), may, `${from} → ${to}`);
      }
    }
  });

  it('stops from anywhere, policy holds from anywhere but a connection in progress, and staying put is a move', () => {
    for (const from of UPSTREAM_STATES) {
      assert.ok(mayMove(from, 'stopped'), `${from} → stopped`);
      assert.ok(mayMove(from, from), `${from} stays`);
      // A start checks policy before it sets 'starting'; a running server is stopped before it is held.
      const holds = from !== 'starting' && from !== 'running';
      for (const held of ['disabled', 'awaiting-approval', 'blocked'] as const)
        assert.equal(mayMove(from, held), holds, `${from} → ${held}`);
    }
  });

  it('answers the questions the CLI, the control operations and the extension ask', () => {
    assert.deepEqual(UPSTREAM_STATES.filter(isUp), ['starting', 'running', 'backoff']);
    assert.deepEqual(UPSTREAM_STATES.filter(isHeld), ['disabled', 'awaiting-approval', 'blocked']);
    assert.deepEqual(UPSTREAM_STATES.filter(waitsForPerson), ['needs-sign-in', 'needs-input']);
    assert.deepEqual(UPSTREAM_STATES.filter(needsAttention), [
      'backoff',
      'failed',
      'awaiting-approval',
      'needs-sign-in',
      'needs-input',
    ]);
    assert.deepEqual(UPSTREAM_STATES.filter(isSettling), ['stopped', 'starting', 'backoff', 'needs-sign-in']);
  });
});
