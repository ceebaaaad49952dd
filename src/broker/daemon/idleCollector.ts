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
 * The "last resort" flavour compacts and releases pages: a regular major collection left ~34 MB
 * (it frees objects but keeps half-empty pages), this one ~18 MB, below the size at start.
 */
export function lastResortCollection(gc = (globalThis as { gc?: GcFunction }).gc): Collect | undefined {
  return gc && (() => gc({ type: 'major', execution: 'sync', flavor: 'last-resort' }));
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
