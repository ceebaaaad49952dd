// The idle collector collects once per burst, only after a quiet period, never mid-burst, and not
// at all where the runtime gives it no gc(). Time is a ManualClock the test advances, so the counts
// hold on a machine of any speed.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
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

  // The probe stands for V8's GC profiler: did the last-resort collection run a mark-compact?
  const fullCollection = (run: () => void): boolean => (run(), true);
  const scavengeOnly = (run: () => void): boolean => (run(), false);
  const lastResort = { type: 'major', execution: 'sync', flavor: 'last-resort' };

  it('asks V8 for a "last resort" collection where that is a full one, the first time after a plain one (it flushes old bytecode)', () => {
    const calls: unknown[] = [];
    const collect = lastResortCollection((options) => void calls.push(options), undefined, fullCollection)!;
    collect();
    assert.deepEqual(calls, [undefined, lastResort], 'first idle collection: plain, then last resort');
    collect();
    collect();
    assert.deepEqual(calls, [undefined, lastResort, lastResort, lastResort], 'later ones: last resort only');
    assert.equal(lastResortCollection(undefined), undefined);
  });

  it('asks for an asynchronous major collection after the first where the "last resort" one was a scavenge (Node 20)', () => {
    const calls: unknown[] = [];
    const collect = lastResortCollection(
      (options) => void calls.push(options),
      () => undefined,
      scavengeOnly,
    )!;
    collect();
    collect();
    collect();
    const asyncMajor = { type: 'major', execution: 'async' };
    assert.deepEqual(calls, [undefined, lastResort, asyncMajor, asyncMajor]);
  });

  // Compaction on every full collection would cost every collection V8 makes under load: the
  // flag is on for the idle collection only, and turned off again when a collection throws.
  // Code space is left alone (optimized code not moved: moving it was the suspect for the lasting
  // per-call cost of stop 41's version), and both flags are back at V8's defaults afterwards.
  const FLUSH_ON = ['--compact-on-every-full-gc', '--no-compact-code-space'];
  const FLUSH_OFF = ['--no-compact-on-every-full-gc', '--compact-code-space'];
  it('turns --compact-on-every-full-gc on (code space left alone) around the first idle collection only, and off again on a throw', () => {
    const steps: string[] = [];
    const record = (flag: string): void => void steps.push(flag);
    const gc = (options?: { execution?: string }): void =>
      void steps.push(options ? (options.execution === 'async' ? 'async' : 'last-resort') : 'plain');
    const collect = lastResortCollection(gc, record, fullCollection)!;
    collect();
    assert.deepEqual(steps, [...FLUSH_ON, 'plain', 'last-resort', ...FLUSH_OFF]);
    steps.length = 0;
    collect();
    assert.deepEqual(
      steps,
      ['last-resort'],
      'the flag is not touched again where the last resort is a full collection',
    );
    steps.length = 0;
    const onNode20 = lastResortCollection(gc, record, scavengeOnly)!;
    onNode20();
    steps.length = 0;
    onNode20();
    assert.deepEqual(steps, ['async'], 'nor for the asynchronous one (Node 20)');
    steps.length = 0;
    const failing = (options?: object): void => {
      if (options) throw new Error('collection failed');
      steps.push('plain');
    };
    assert.throws(() => lastResortCollection(failing, record, fullCollection)!(), /collection failed/);
    assert.deepEqual(steps, [...FLUSH_ON, 'plain', ...FLUSH_OFF]);
  });
});

// Real V8, in a Node process of its own started as the broker is (--expose-gc): the first idle
// collection drops the bytecode of code that ran once (as the broker's start-up does), which the
// last-resort collection alone, what it ran before, never does (the positive control).
describe('The first idle collection in V8', function () {
  this.timeout(30_000);
  const bytecodeAfter = (how: 'idle' | 'last-resort'): { before: number; after: number } => {
    const script = `
      const v8 = require('node:v8');
      const { lastResortCollection } = require(${JSON.stringify(path.join(__dirname, '../../../src/broker/daemon/idleCollector.js'))});
      new Function(Array.from({ length: 300 }, (_, i) =>
        'function f' + i + '(a) { let s = 0; for (const x of a) s += x * ' + i + '; return s; } f' + i + '([1, 2]);').join('\\n'))();
      const before = v8.getHeapCodeStatistics().bytecode_and_metadata_size;
      if (process.argv[1] === 'idle') lastResortCollection()();
      else gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
      const after = v8.getHeapCodeStatistics().bytecode_and_metadata_size;
      process.stdout.write(JSON.stringify({ before, after }));`;
    return JSON.parse(execFileSync(process.execPath, ['--expose-gc', '-e', script, how], { encoding: 'utf8' })) as {
      before: number;
      after: number;
    };
  };

  // Node 20's V8 (the broker's runtime): the last-resort collection keeps that bytecode and ours drops
  // most of it. Node 24's V8 (the extension host's) treats both collections alike: each drops the same
  // ~20% and keeps the rest (733 -> 594 KB either way), so there the flush changes nothing, and the test
  // holds it to that: no more bytecode left than the last-resort collection leaves, but the ~1 KB of
  // the idle collection's own code, which ran in that process only.
  const keepsBytecode = Number(process.versions.node.split('.')[0]) < 22;
  it('flushes the bytecode of functions that ran once where the last-resort collection alone keeps it', () => {
    const idle = bytecodeAfter('idle');
    const lastResort = bytecodeAfter('last-resort');
    assert.ok(
      idle.after <= lastResort.after + 4096,
      `no more bytecode left than the last-resort collection leaves: ${idle.after} against ${lastResort.after} bytes`,
    );
    if (!keepsBytecode) return;
    assert.ok(
      lastResort.after > lastResort.before * 0.9,
      `control: a collection asked for with options keeps the bytecode (${lastResort.before} -> ${lastResort.after} bytes)`,
    );
    assert.ok(idle.after < idle.before / 2, `bytecode ${idle.before} -> ${idle.after} bytes`);
  });
});

// Real V8 again: a burst's garbage that reached the old generation is freed by the idle collections
// after the first one too. Node 20's V8 runs a scavenge for gc() with any options, the last-resort
// ones included, so main's later collections left it all there (fails on main under Node 20).
describe('The later idle collections in V8', function () {
  this.timeout(90_000);
  interface Burst {
    garbage: number;
    left: number;
    kinds: string[];
  }
  const laterCollections = (): { control: Burst; bursts: Burst[] } => {
    const script = `
      const v8 = require('node:v8');
      const { lastResortCollection } = require(${JSON.stringify(path.join(__dirname, '../../../src/broker/daemon/idleCollector.js'))});
      const oldSpace = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space').space_used_size;
      // ~15 MB of objects moved to the old generation by two minor collections (no major one), then dropped.
      const burst = () => {
        globalThis.kept = Array.from({ length: 100000 }, (_, i) => ({ i, s: 'call ' + i, a: [i] }));
        gc({ type: 'minor' });
        gc({ type: 'minor' });
        const live = oldSpace();
        globalThis.kept = null;
        return live;
      };
      // The kinds of collection V8 ran for it. An asynchronous one runs as a task: after a burst, wait
      // for the garbage to go (20 s at most: then the assertions below say what ran).
      const collected = async (collection, wait = false) => {
        const profiler = new v8.GCProfiler();
        profiler.start();
        const started = Date.now();
        const before = oldSpace();
        collection();
        while (wait && oldSpace() > before / 2 && Date.now() - started < 20_000) await new Promise((r) => setTimeout(r, 10));
        return profiler.stop().statistics.map((s) => s.gcType);
      };
      (async () => {
      const collect = lastResortCollection();
      await collected(collect); // the first idle collection, after start-up
      const emptied = oldSpace();
      // The control: a collection asked for with options, in this V8, leaves the garbage or frees it.
      const controlLive = burst();
      const controlKinds = await collected(() => gc({ type: 'major', execution: 'sync', flavor: 'last-resort' }));
      const control = { garbage: controlLive - emptied, left: oldSpace() - emptied, kinds: controlKinds };
      await collected(() => gc());
      const bursts = [];
      for (let i = 0; i < 2; i++) {
        const before = oldSpace();
        const live = burst();
        const kinds = await collected(collect, true);
        bursts.push({ garbage: live - before, left: oldSpace() - before, kinds });
      }
      process.stdout.write(JSON.stringify({ control, bursts }));
      })();`;
    // V8's own full collections off (incremental marking finishes one in a task, the memory reducer
    // starts one when allocation stops): while the test waits, only the ones asked for may run.
    const v8Own = ['--no-incremental-marking', '--no-memory-reducer'];
    return JSON.parse(
      execFileSync(process.execPath, ['--expose-gc', ...v8Own, '-e', script], { encoding: 'utf8' }),
    ) as {
      control: Burst;
      bursts: Burst[];
    };
  };

  it("the second and third collections are full ones and free the old generation's garbage", () => {
    const { control, bursts } = laterCollections();
    const MB = 1024 * 1024;
    // Positive control: the burst put its garbage in old space, where a collection must be full to reach it.
    assert.ok(control.garbage > 8 * MB, `the burst left ${control.garbage} bytes in old space`);
    if (!control.kinds.includes('MarkSweepCompact')) {
      assert.ok(
        control.left > control.garbage / 2,
        `a scavenge leaves it: ${control.left} of ${control.garbage} bytes`,
      );
    }
    bursts.forEach(({ garbage, left, kinds }, i) => {
      const which = i === 0 ? 'second' : 'third';
      assert.ok(garbage > 8 * MB, `burst before the ${which} collection: ${garbage} bytes in old space`);
      assert.ok(kinds.includes('MarkSweepCompact'), `the ${which} collection ran ${kinds.join(', ')}`);
      assert.ok(left < garbage / 10, `the ${which} collection left ${left} of ${garbage} bytes`);
    });
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
