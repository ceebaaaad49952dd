// The editor's numbers per server: requests, error rate and p50/p95 over the last minutes, kept by
// the broker itself (no collector needed). A fixed ring of the latest requests per server: memory
// stays bounded however busy a server is; the window is cut at read time.

/** How far back the numbers reach. */
export const LIVE_WINDOW_MS = 5 * 60_000;
/** Requests kept per server (the newest); past this the oldest are overwritten. */
const RING_SIZE = 2048;

export interface ServerNumbers {
  requests: number;
  errors: number;
  /** errors / requests, 0..1. */
  errorRate: number;
  p50Ms: number;
  p95Ms: number;
}

export interface LiveNumbers {
  windowMs: number;
  servers: Record<string, ServerNumbers>;
}

class Ring {
  readonly at = new Float64Array(RING_SIZE);
  readonly ms = new Float64Array(RING_SIZE);
  readonly failed = new Uint8Array(RING_SIZE);
  next = 0;
  size = 0;

  add(at: number, ms: number, failed: boolean): void {
    this.at[this.next] = at;
    this.ms[this.next] = ms;
    this.failed[this.next] = failed ? 1 : 0;
    this.next = (this.next + 1) % RING_SIZE;
    if (this.size < RING_SIZE) this.size++;
  }
}

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: Float64Array, p: number): number {
  if (!sorted.length) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
}

export class LiveNumbersRecorder {
  private readonly rings = new Map<string, Ring>();

  constructor(private readonly now: () => number = Date.now) {}

  record(server: string, ms: number, failed: boolean): void {
    let ring = this.rings.get(server);
    if (!ring) this.rings.set(server, (ring = new Ring()));
    ring.add(this.now(), ms, failed);
  }

  read(windowMs = LIVE_WINDOW_MS): LiveNumbers {
    const servers: Record<string, ServerNumbers> = {};
    for (const name of this.rings.keys()) {
      const numbers = this.readServer(name, windowMs);
      if (numbers) servers[name] = numbers;
    }
    return { windowMs, servers };
  }

  /** One server's numbers; undefined when it served nothing in the window. */
  readServer(name: string, windowMs = LIVE_WINDOW_MS): ServerNumbers | undefined {
    const ring = this.rings.get(name);
    if (!ring) return undefined;
    const since = this.now() - windowMs;
    const kept: number[] = [];
    let errors = 0;
    for (let i = 0; i < ring.size; i++) {
      if (ring.at[i] < since) continue;
      kept.push(ring.ms[i]);
      errors += ring.failed[i];
    }
    if (!kept.length) return undefined;
    const sorted = Float64Array.from(kept).sort();
    return {
      requests: kept.length,
      errors,
      errorRate: errors / kept.length,
      p50Ms: Math.round(percentile(sorted, 0.5) * 100) / 100,
      p95Ms: Math.round(percentile(sorted, 0.95) * 100) / 100,
    };
  }
}
