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
 * The "last resort" flavour compacts and releases pages, on Node 22 and later. On Node 20 (V8 11.3)
 * a `gc()` given any options with `execution: 'sync'` runs a scavenge instead, so there the
 * collection after a burst frees the young generation only. Kept so on purpose: a full collection
 * at idle after bursts was measured (docs/performance.md, "Memory after bursts, stop 44"): a plain
 * `gc()` cost the next burst ~13% CPU per call (it flushes the call path's bytecode), an async major
 * collection cost no CPU and kept 1-3 MB less heap, but in 2 of 5 runs left the broker 22-37 MB
 * higher in RSS (V8 sized its next heap generously after collecting at idle).
 *
 * The first idle collection after start does more (docs/performance.md, "Memory, stop 41" and "stop 42"): a plain
 * `gc()` before it flushes the bytecode of functions not run lately, the start-up's mostly (reading
 * the registry, starting servers, learning catalogs), and what only that code held: ~3.4 MB of the
 * idle heap. A collection asked for with options never flushes, even under --stress-flush-code,
 * which is why the idle heap settled at 14 or 17.5 MB at random (whether one of V8's own collections
 * had flushed before). Both with --compact-on-every-full-gc, for these two collections only: what
 * the flush frees is spread thinly over many pages that V8's own choice leaves in place (old space
 * 11.6 MB used in 15.0 committed without the flag, 12.2 with it; the plain one must compact).
 * Once only: done after every burst, the next burst ran ~15% more CPU per call than without
 * (bench/compare.mjs, brokers idle between blocks), the code it uses being compiled and optimized
 * again; start-up code is flushed once and for all.
 * Code space is left where it is (--no-compact-code-space for these collections, docs/performance.md
 * "Memory, stop 42"): the old space's pages are what the flush thins out, and stop 41's version,
 * which compacted code space too, was measured at ~7% more CPU per call afterwards (optimized code
 * moved was the suspect); without it, three interleaved runs showed no cost.
 */
const FLUSH_FLAGS = ['--compact-on-every-full-gc', '--no-compact-code-space'];
/** V8's defaults again. */
const FLAGS_AFTER = ['--no-compact-on-every-full-gc', '--compact-code-space'];

export function lastResortCollection(
  gc = (globalThis as { gc?: GcFunction }).gc,
  setV8Flag: (flag: string) => void = v8.setFlagsFromString,
): Collect | undefined {
  if (!gc) return undefined;
  const lastResort = (): void => gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  let startUpFlushed = false;
  return () => {
    if (startUpFlushed) return lastResort();
    startUpFlushed = true;
    for (const flag of FLUSH_FLAGS) setV8Flag(flag);
    try {
      gc();
      lastResort();
    } finally {
      // On for these collections only: on every full collection under load it would cost CPU.
      for (const flag of FLAGS_AFTER) setV8Flag(flag);
    }
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
