// Gives memory back once a burst of calls is over. V8 leaves a burst's garbage in the old
// generation until the next major collection, and an idle broker allocates too little to ever
// reach one: after 9,000 calls it sat at ~47 MB of anonymous memory where ~21 MB was there at
// start. A collection a couple of seconds after the last request, once per burst, returns it.
// It needs `globalThis.gc`, which the broker's launch flags (--expose-gc) provide, or exposeGc()
// (`switchboard serve` calls it: started as a plain `node dist/broker.js`, from bin/ or npx, it
// has no flags); without it (in-process tests) this does nothing.
import * as v8 from 'node:v8';
import * as vm from 'node:vm';

export type Collect = () => void;

type GcFunction = (options?: {
  type?: 'major' | 'minor';
  execution?: 'sync' | 'async';
  flavor?: 'regular' | 'last-resort';
}) => void;

/**
 * Makes `globalThis.gc` exist in a process started without --expose-gc: V8 hands it to a context
 * made after the flag is set. The broker process only (serve), never the extension host.
 */
export function exposeGc(): void {
  const global = globalThis as { gc?: GcFunction };
  if (global.gc) return;
  v8.setFlagsFromString('--expose-gc');
  global.gc = vm.runInNewContext('gc') as GcFunction;
}

/**
 * Every idle collection must be a full one: a burst's garbage that reached the old generation stays
 * there until a major collection. What to ask V8 for depends on the runtime:
 *
 * - `gc({ type: 'major', execution: 'sync', flavor: 'last-resort' })`: in Node 22/24 a full
 *   collection that also shrinks the heap (`Mark-Compact (reduce)` in --trace-gc). In Node 20.20
 *   (V8 11.3, the broker's runtime) V8's gc extension runs a *scavenge* for any options object with
 *   `execution: 'sync'`: the old generation's garbage stays. Stops 40-42 took it for a compacting
 *   collection; on Node 20 it never was one (docs/performance.md, "Memory after bursts, stop 44").
 * - a plain `gc()`: a full collection in every version, which in Node 20 also flushes the bytecode
 *   of every function not running (what only that code held goes with it: ~3.4 MB of the idle heap
 *   after start-up, "Memory, stop 41" and "stop 42"). It must compact: what it frees is spread
 *   thinly over many pages that V8's own choice leaves in place (old space 11.6 MB used in 15.0
 *   committed without --compact-on-every-full-gc, 12.2 with it), so that flag is on around it, and
 *   only around it (on every collection under load it would cost CPU). Code space stays where it
 *   is (--no-compact-code-space, "Memory, stop 42"). Once after start: after every burst it flushes
 *   the call path's code too, and the next burst ran ~10% more CPU per call recompiling it.
 * - `gc({ type: 'major', execution: 'async' })`: in Node 20 a full collection (run as a task, right
 *   after this returns) that flushes nothing: the later collections there, which gave back the same
 *   V8 heap as the plain one after bursts at no measured CPU cost ("stop 44").
 *
 * The first idle collection runs the plain one and then the last-resort one, watched by V8's GC
 * profiler: whether that ran a mark-compact is the fact, observed rather than read off a version
 * number, that decides the later collections. If it did (Node 22/24) they are last-resort ones; if
 * it was a scavenge (Node 20) they are asynchronous major ones.
 */
const FLUSH_FLAGS = ['--compact-on-every-full-gc', '--no-compact-code-space'];
/** V8's defaults again. */
const FLAGS_AFTER = ['--no-compact-on-every-full-gc', '--compact-code-space'];

/** Runs `collection` and says whether V8 ran a full (mark-compact) collection for it. */
export type FullCollectionProbe = (collection: () => void) => boolean;

export const ranFullCollection: FullCollectionProbe = (collection) => {
  const profiler = new v8.GCProfiler();
  profiler.start();
  try {
    collection();
  } catch (error) {
    // A profiler left running would record every later collection.
    profiler.stop();
    throw error;
  }
  return profiler.stop().statistics.some((gc) => gc.gcType === 'MarkSweepCompact');
};

export function lastResortCollection(
  gc = (globalThis as { gc?: GcFunction }).gc,
  setV8Flag: (flag: string) => void = v8.setFlagsFromString,
  probe: FullCollectionProbe = ranFullCollection,
): Collect | undefined {
  if (!gc) return undefined;
  const lastResort = (): void => gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  const withFlushFlags = (collection: () => void): void => {
    for (const flag of FLUSH_FLAGS) setV8Flag(flag);
    try {
      collection();
    } finally {
      for (const flag of FLAGS_AFTER) setV8Flag(flag);
    }
  };
  const asyncMajor = (): void => gc({ type: 'major', execution: 'async' });
  /** Decided by the first collection; until then (or when it threw) the first one runs again. */
  let later: Collect | undefined;
  return () => {
    if (later) return later();
    withFlushFlags(() => {
      gc();
      later = probe(lastResort) ? lastResort : asyncMajor;
    });
  };
}

/** The timers it arms: Node's by default; tests pass a clock they advance themselves. */
export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const NODE_TIMERS: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export class IdleCollector {
  private activity = 0;
  private seen = 0;
  private timer?: unknown;
  private closed = false;
  /** Full collections run so far: for status and tests. */
  collections = 0;

  constructor(
    private readonly quietMs = 2_000,
    private readonly collect: Collect | undefined = lastResortCollection(),
    private readonly timers: Timers = NODE_TIMERS,
  ) {}

  get enabled(): boolean {
    return this.collect !== undefined;
  }

  /** Called on every request: O(1), and at most one pending timer however busy the broker is. */
  touch(): void {
    this.activity++;
    if (this.timer === undefined && this.collect && !this.closed) this.arm();
  }

  close(): void {
    this.closed = true;
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(): void {
    this.seen = this.activity;
    this.timer = this.timers.setTimeout(() => {
      this.timer = undefined;
      if (this.closed) return;
      // Still busy: look again one quiet period later rather than collecting mid-burst.
      if (this.activity !== this.seen) return this.arm();
      this.collections++;
      this.collect!();
    }, this.quietMs);
  }
}
