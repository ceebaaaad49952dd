// The idle collector collects once per burst, only after a quiet period, never mid-burst, and not
// at all where the runtime gives it no gc(). Time is a ManualClock the test advances, so the counts
// hold on a machine of any speed.
import assert from 'node:assert/strict';
import { IdleCollector, lastResortCollection } from '../../../src/broker/daemon/idleCollector';
import { ManualClock } from '../../helpers/manualClock';

describe('IdleCollector', () => {
  it('waits for a quiet period after the last request, then collects once', () => {
    const clock = new ManualClock();
    let collected = 0;
    const c = new IdleCollector(200, () => void collected++, clock);
    // A burst three quiet periods long: a request every 5 ms for 600 ms.
    for (let t = 0; t < 600; t += 5) {
      c.touch();
      clock.advance(5);
    }
    assert.equal(collected, 0, 'no collection while requests keep coming');
    assert.equal(clock.timersPending, 1, 'one timer at a time however busy it is');
    clock.advance(199);
    assert.equal(collected, 0, 'not before a whole quiet period');
    clock.advance(400);
    assert.equal(collected, 1, 'one collection once the burst is over');
    assert.equal(c.collections, 1);
    clock.advance(10_000);
    assert.equal(collected, 1, 'nothing more while nothing happens');
    c.touch();
    clock.advance(400);
    assert.equal(collected, 2, 'the next burst gets its own collection');
    c.close();
  });

  it('does nothing after close, or without a gc function', () => {
    const clock = new ManualClock();
    let collected = 0;
    const closed = new IdleCollector(20, () => void collected++, clock);
    closed.touch();
    closed.close();
    assert.equal(clock.timersPending, 0, 'close cancels its timer');
    const none = new IdleCollector(20, undefined, clock);
    none.touch();
    assert.equal(none.enabled, false);
    clock.advance(1000);
    assert.equal(collected, 0);
    assert.equal(none.collections, 0);
  });

  it('asks V8 for the compacting "last resort" collection', () => {
    const calls: unknown[] = [];
    lastResortCollection((options) => {
      calls.push(options);
    })!();
    assert.deepEqual(calls, [{ type: 'major', execution: 'sync', flavor: 'last-resort' }]);
    assert.equal(lastResortCollection(undefined), undefined);
  });
});
