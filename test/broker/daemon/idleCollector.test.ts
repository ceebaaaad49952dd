// The idle collector collects once per burst, only after a quiet period, never mid-burst, and not
// at all where the runtime gives it no gc(). Time is a ManualClock the test advances, so the counts
// hold on a machine of any speed.
import assert from 'node:assert/strict';
import { IdleCollector, lastResortCollection } from '../../../src/broker/daemon/idleCollector';
import {
  connect,
  fixtureServer,
  killStarted,
  removeTempDirs,
  startBrokerProcess,
  tempDir,
  writeRegistry,
} from '../../helpers/broker';
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

// `switchboard serve` from bin/switchboard.js or npx is a plain `node dist/broker.js serve`, without
// the launchers' --expose-gc: it asks V8 for gc() itself, so its idle collector works there too.
describe('IdleCollector in a broker started without --expose-gc', function () {
  this.timeout(90_000);
  after(async () => {
    await killStarted();
    removeTempDirs();
  });

  it('collects once the broker goes quiet (broker.memory.idleCollections in its state)', async () => {
    const root = tempDir('sb-idle-gc-');
    writeRegistry(root, { 'mcp-servers.d/echo.yaml': fixtureServer('echo', 'echo.mjs') });
    // startBrokerProcess runs `node dist/broker.js serve`: no Node flags, as bin/switchboard.js does.
    const broker = await startBrokerProcess({ root });
    const client = await connect(broker.url, broker.token);
    const collections = async (): Promise<number> => {
      const state = await client.readResource({ uri: 'switchboard://state' });
      const text = (state.contents[0] as { text: string }).text;
      return (JSON.parse(text) as { broker: { memory: { idleCollections: number } } }).broker.memory.idleCollections;
    };
    try {
      // Each read is a request, and a request restarts the 2 s quiet period: read less and less often.
      let seen = await collections();
      for (let pause = 2_500; seen === 0 && pause <= 12_500; pause += 2_500) {
        await new Promise((resolve) => setTimeout(resolve, pause));
        seen = await collections();
      }
      assert.ok(seen >= 1, 'the broker collected after going quiet, without --expose-gc on its command line');
    } finally {
      await client.close();
      await broker.stop();
    }
  });
});
