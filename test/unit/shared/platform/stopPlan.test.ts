// The stdio shutdown order per OS as data: stdin first, then the polite stop, then the forced one,
// and always the whole tree (process group on POSIX, taskkill /T on Windows).
import assert from 'node:assert/strict';
import { stopPlan, taskkillTreeArgs } from '../../../../src/broker/shared/platform/stopPlan';

describe('platform: stop plans', () => {
  it('on Linux and macOS: stdin, SIGTERM to the group, grace, SIGKILL, and SIGKILL to the group after exit', () => {
    for (const platform of ['linux', 'darwin'] as const) {
      assert.deepEqual(stopPlan(platform, 42, { stdinGraceMs: 0, termGraceMs: 2000 }), [
        { kind: 'close-stdin' },
        { kind: 'signal-group', signal: 'SIGTERM' },
        { kind: 'wait', ms: 2000 },
        { kind: 'signal-group', signal: 'SIGKILL' },
        { kind: 'wait', ms: Number.POSITIVE_INFINITY },
        { kind: 'signal-group', signal: 'SIGKILL', always: true },
      ]);
    }
  });

  it('waits after closing stdin when a stdin grace is given (the MCP order: stdin, wait, SIGTERM)', () => {
    const steps = stopPlan('linux', 42, { stdinGraceMs: 500, termGraceMs: 2000 });
    assert.deepEqual(steps.slice(0, 3), [
      { kind: 'close-stdin' },
      { kind: 'wait', ms: 500 },
      { kind: 'signal-group', signal: 'SIGTERM' },
    ]);
  });

  it('on Windows: stdin, grace, then taskkill /T /F on the tree while the leader lives, then the leader alone', () => {
    const steps = stopPlan('win32', 4711, { stdinGraceMs: 2000, termGraceMs: 2000 });
    assert.deepEqual(steps, [
      { kind: 'close-stdin' },
      { kind: 'wait', ms: 2000 },
      { kind: 'run', file: 'taskkill', args: ['/T', '/F', '/PID', '4711'] },
      { kind: 'wait', ms: 2000 },
      { kind: 'kill-leader' },
      { kind: 'wait', ms: Number.POSITIVE_INFINITY },
    ]);
    // Never after the leader is gone: its pid may be someone else's by then.
    assert.ok(steps.every((s) => !('always' in s && s.always)));
    assert.ok(
      steps.every((s) => s.kind !== 'signal-group'),
      'no process.kill(-pid) on Windows',
    );
  });

  it('names the tree, force and pid for taskkill', () => {
    assert.deepEqual(taskkillTreeArgs(7), ['/T', '/F', '/PID', '7']);
  });
});
