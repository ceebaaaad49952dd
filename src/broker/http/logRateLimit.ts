// How many log messages per upstream reach the sessions: a token bucket per server (a burst,
// then a steady rate). What it drops is counted, so the endpoint can say how many were lost.
// Pure: the clock is a parameter.

export interface LogRate {
  /** Messages per second, once the burst is spent. */
  perSecond: number;
  /** Messages that may go out at once after a quiet period. */
  burst: number;
}

export const DEFAULT_LOG_RATE: LogRate = { perSecond: 50, burst: 100 };

/**
 * Reads `serve --log-rate`: `<per-second>` (the burst is then twice that) or `<per-second>/<burst>`.
 * Throws a message that says the form, since it goes straight to the operator's terminal.
 */
export function parseLogRate(text: string): LogRate {
  const m = /^(\d+)(?:\/(\d+))?$/.exec(text.trim());
  const perSecond = m ? Number(m[1]) : NaN;
  const burst = m?.[2] !== undefined ? Number(m[2]) : perSecond * 2;
  if (!m || perSecond < 1 || burst < 1)
    throw new Error(`--log-rate takes <messages per second>[/<burst>], both at least 1 (e.g. 50/100), got '${text}'`);
  return { perSecond, burst };
}

interface Bucket {
  tokens: number;
  at: number;
  dropped: number;
}

export class LogRateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    readonly rate: LogRate = DEFAULT_LOG_RATE,
    private readonly now: () => number = Date.now,
  ) {}

  /** How long an empty bucket takes to fill again: when a drop is reported. */
  get refillMs(): number {
    return Math.ceil((1000 * this.rate.burst) / this.rate.perSecond);
  }

  /** Whether a message from `server` may go out now; one that may not is counted as dropped. */
  admit(server: string): boolean {
    const t = this.now();
    let bucket = this.buckets.get(server);
    if (!bucket) {
      bucket = { tokens: this.rate.burst, at: t, dropped: 0 };
      this.buckets.set(server, bucket);
    } else if (t > bucket.at) {
      bucket.tokens = Math.min(this.rate.burst, bucket.tokens + ((t - bucket.at) * this.rate.perSecond) / 1000);
      bucket.at = t;
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return true;
    }
    bucket.dropped++;
    return false;
  }

  /** The messages from `server` dropped since the last call; the count starts again at 0. */
  takeDropped(server: string): number {
    const bucket = this.buckets.get(server);
    if (!bucket) return 0;
    const dropped = bucket.dropped;
    bucket.dropped = 0;
    return dropped;
  }
}
