// The running broker's discovery record (pid, port, token file) and how every launch starts Node.
import * as fs from 'node:fs';

export interface BrokerRecord {
  pid: number;
  port: number;
  url: string;
  root: string;
  operatorTokenFile: string;
  startedAt: string;
  version: string;
}

export function readRecord(file: string): BrokerRecord | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as BrokerRecord;
  } catch {
    return undefined;
  }
}

export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Node flags of every broker launch (the extension's, the CLI's background start, `npm start`,
 * the benchmarks). A busy broker otherwise grows V8's young generation to 2 × 8 MB and keeps it:
 * 1 MB semi-spaces make it ~5 MB smaller just after start and ~10 MB after a burst of calls, at
 * a price: ~10% more broker CPU per call under 8 concurrent sessions (interleaved A/B after 3,000
 * warm-up calls: 454-465 vs 404-410 µs), from objects promoted to the old generation sooner.
 * --expose-gc lets the IdleCollector return a burst's garbage once the broker goes quiet.
 */
export const BROKER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=1', '--expose-gc'];

/**
 * Environment the launches add (a value the user set wins). Upstream servers inherit neither
 * (environment.ts).
 * - MALLOC_ARENA_MAX: glibc gives each thread that calls malloc an arena of its own and keeps what
 *   was freed in it: V8's compiler threads left ~9 MB behind after a burst of calls. One arena
 *   costs nothing measurable here (a handful of threads, the main one does nearly all the work).
 * - MALLOC_MMAP_THRESHOLD_: glibc's own starting value, 128 KB, fixed. By default each large block
 *   freed raises the threshold to its size, so a burst of 1 MB bodies moves such blocks into the
 *   heap, where freed memory stays resident between live blocks; an idle broker was 1.4–2.5 MB
 *   larger (/proc smaps_rollup, 50 lazy servers 2.4 MB). Not lower: a 32 KB threshold saved
 *   ~5 MB more (V8's compile buffers) but cost an mmap and a munmap per call (the 64 KB buffer of
 *   every read from an upstream's pipe; strace).
 */
export const BROKER_ENV: Readonly<Record<string, string>> = {
  MALLOC_ARENA_MAX: '1',
  MALLOC_MMAP_THRESHOLD_: '131072',
};

/** `env` with BROKER_ENV added where it does not already say otherwise. */
export function brokerEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...BROKER_ENV, ...env };
}
