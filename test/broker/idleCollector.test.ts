// The idle collector collects once per burst, only after a quiet period, never mid-burst, and not
// at all where the runtime gives it no gc().
import assert from 'node:assert/strict';
import { IdleCollector, lastResortCollection } from '../../src/broker/daemon/idleCollector';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('IdleCollector', function () {
  this.timeout(10_000);
  it('waits for a quiet period after the last request, then collects once', async () => {
    let collected = 0;
    const c = new IdleCollector(200, () => {
      collected++;
    });
    // A burst three quiet periods long: a request every 5 ms for 600 ms.
    for (const end = Date.now() + 600; Date.now() < end;) {
      c.touch();
      await sleep(5);
    }
    assert.equal(collected, 0, 'no collection while requests keep coming');
    await sleep(1000);
    assert.equal(collected, 1, 'one collection once the burst is over');
    assert.equal(c.collections, 1);
    await sleep(200);
    assert.equal(collected, 1, 'nothing more while nothing happens');
    c.touch();
    await sleep(1000);
    assert.equal(collected, 2, 'the next burst gets its own collection');
    c.close();
  });

  it('does nothing after close, or without a gc function', async () => {
    let collected = 0;
    const closed = new IdleCollector(20, () => {
      collected++;
    });
    closed.touch();
    closed.close();
    const none = new IdleCollector(20, undefined);
    none.touch();
    assert.equal(none.enabled, false);
    await sleep(150);
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
