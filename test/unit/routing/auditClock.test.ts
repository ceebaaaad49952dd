// The audit log's timestamps are made without a Date per call (IsoClock): they must be exactly
// what `new Date(ms).toISOString()` gives, across minutes, hours, days and years.
import assert from 'node:assert/strict';
import { IsoClock } from '../../../src/broker/routing/audit';

describe('audit timestamps (IsoClock)', () => {
  it('gives what toISOString gives, for times in order and out of order', () => {
    const clock = new IsoClock();
    const start = Date.UTC(2026, 11, 31, 23, 58, 59, 995);
    const times: number[] = [];
    for (let ms = start; ms < start + 150_000; ms += 7) times.push(ms);
    // A clock stepped back (NTP) and far jumps.
    times.push(start - 1, start - 60_001, Date.UTC(1999, 0, 1), Date.UTC(2030, 5, 15, 12, 0, 0, 9), start + 5);
    for (const ms of times) assert.equal(clock.now(ms), new Date(ms).toISOString(), String(ms));
  });

  it('reads the time now when none is given', () => {
    const before = Date.now();
    const at = Date.parse(new IsoClock().now());
    assert.ok(at >= before && at <= Date.now());
  });
});
