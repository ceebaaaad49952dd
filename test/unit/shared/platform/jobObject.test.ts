// Windows Job Objects, the parts that are data: the structure handed to SetInformationJobObject and
// the stop plan that ends a server's job. The kernel32 calls themselves run under Wine in
// test/windows/smoke.test.ts (npm run test:windows).
import assert from 'node:assert/strict';
import {
  EXTENDED_LIMIT_INFORMATION_SIZE,
  extendedLimitInformation,
  JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
  jobUnavailableNote,
  LIMIT_FLAGS_OFFSET,
  serverJobLimitFlags,
} from '../../../../src/broker/shared/platform/jobObject';
import { stopPlan } from '../../../../src/broker/shared/platform/stopPlan';

describe('platform: Windows Job Objects', () => {
  it('builds JOBOBJECT_EXTENDED_LIMIT_INFORMATION for x64 with only the limit flags set', () => {
    const info = extendedLimitInformation(serverJobLimitFlags());
    assert.equal(info.length, 144, 'sizeof(JOBOBJECT_EXTENDED_LIMIT_INFORMATION) on x64');
    assert.equal(EXTENDED_LIMIT_INFORMATION_SIZE, 144);
    // LimitFlags follows PerProcessUserTimeLimit and PerJobUserTimeLimit (two LARGE_INTEGERs).
    assert.equal(LIMIT_FLAGS_OFFSET, 16);
    assert.equal(info.readUInt32LE(16), 0x2000 | 0x400);
    const others = Buffer.concat([info.subarray(0, 16), info.subarray(20)]);
    assert.ok(
      others.every((b) => b === 0),
      'no time, memory, process-count or priority limit',
    );
  });

  it('kills the tree when the job closes (the broker gone) and never allows breakaway', () => {
    const flags = serverJobLimitFlags();
    assert.ok(flags & JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE);
    assert.equal(flags & 0x800, 0, 'JOB_OBJECT_LIMIT_BREAKAWAY_OK');
    assert.equal(flags & 0x1000, 0, 'JOB_OBJECT_LIMIT_SILENT_BREAKAWAY_OK');
    assert.equal(extendedLimitInformation(0xffffffff).readUInt32LE(16), 0xffffffff, 'written unsigned');
  });

  it('with a job, Windows ends the job after the stdin grace, and always, even once the leader exited', () => {
    const steps = stopPlan('win32', 4711, { stdinGraceMs: 2000, termGraceMs: 1000, job: true });
    assert.deepEqual(steps, [
      { kind: 'close-stdin' },
      { kind: 'wait', ms: 2000 },
      { kind: 'end-job', always: true },
      { kind: 'wait', ms: 1000 },
      { kind: 'kill-leader' },
      { kind: 'wait', ms: Number.POSITIVE_INFINITY },
    ]);
    assert.ok(
      steps.every((s) => s.kind !== 'run'),
      'no taskkill: a job needs no pid walk',
    );
  });

  it('a job changes nothing on Linux and macOS, and without one Windows keeps taskkill /T', () => {
    for (const platform of ['linux', 'darwin'] as const) {
      const timing = { stdinGraceMs: 0, termGraceMs: 2000 };
      assert.deepEqual(stopPlan(platform, 1, { ...timing, job: true }), stopPlan(platform, 1, timing));
    }
    const without = stopPlan('win32', 9, { stdinGraceMs: 10, termGraceMs: 10 });
    assert.ok(without.some((s) => s.kind === 'run' && s.file === 'taskkill'));
    assert.ok(without.every((s) => s.kind !== 'end-job'));
  });

  it('says what a stop cannot reach when no job can be made', () => {
    const note = jobUnavailableNote('koffi is not installed');
    assert.match(note, /koffi is not installed/);
    assert.match(note, /taskkill \/T/);
    assert.match(note, /left behind/);
  });
});
