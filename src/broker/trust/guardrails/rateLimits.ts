// Calls per minute and calls at once, per the limits of the policies in force. A limit counts per
// client, per tool or per client on each tool (`per`); every limit that matches a call applies.
// The window slides: a call counts for 60 seconds after it started, so `retryAfterSeconds` is when
// the oldest call counted leaves it.
import type { PolicyDef, RateLimit } from '../../../registry/schema';
import { globsMatch, type GuardedCall } from './ruleSet';

const WINDOW_MS = 60_000;

export interface RateRefusal {
  policy: string;
  limit: string;
  /** `per-minute` or `concurrent`: which budget is spent. */
  kind: 'per-minute' | 'concurrent';
  allowed: number;
  /** Whole seconds until a call would be admitted (for `concurrent`, unknown: 1, try again soon). */
  retryAfterSeconds: number;
  /** Who shares the budget, in words ("client 'copilot' on files__write_file"). */
  counted: string;
}

interface Budget {
  /**
   * Start times, oldest first; those before `head` have left the window. An index instead of
   * shift(): a generous callsPerMinute keeps tens of thousands of entries, and shifting an array that
   * large copies it on every call; the array is cut once half of it has left.
   */
  starts: number[];
  head: number;
  inFlight: number;
  /** Who shares it, in words (as a refusal says it). */
  counted: string;
  /** The server of the tool it counts (absent: a per-client budget, every matching server's calls). */
  server?: string;
}

/** One budget of a limit as it stands now: who shares it, calls in the last minute, calls in flight. */
export interface LimitUsage {
  counted: string;
  lastMinute: number;
  inFlight: number;
}

interface LiveLimit {
  policy: string;
  limit: RateLimit;
}

export class RateLimits {
  private limits: LiveLimit[] = [];
  private readonly budgets = new Map<string, Budget>();

  constructor(private readonly now: () => number = Date.now) {}

  /** The limits in force now; counts of limits that stay are kept (a reload does not reset them). */
  update(policies: ReadonlyMap<string, PolicyDef>): void {
    this.limits = [...policies.keys()]
      .sort()
      .flatMap((policy) => policies.get(policy)!.limits.map((limit) => ({ policy, limit })));
    const live = new Set(this.limits.map((l) => `${l.policy}/${l.limit.name}/`));
    for (const key of this.budgets.keys())
      if (![...live].some((prefix) => key.startsWith(prefix))) this.budgets.delete(key);
  }

  get size(): number {
    return this.limits.length;
  }

  /** What limit `name` of `policy` has counted for calls to `server` lately (for the console). */
  usage(policy: string, name: string, server: string): LimitUsage[] {
    return usageOf(this.budgets, `${policy}/${name}/`, server, this.now());
  }

  /**
   * Admits a call against every matching limit, or refuses it with the first budget spent (nothing is
   * counted then). Admitted: the returned function ends the call's concurrency slot (call it once).
   */
  admit(call: GuardedCall): { release: () => void } | { refused: RateRefusal } {
    const now = this.now();
    const taken: Budget[] = [];
    const matching = this.limits.filter(
      ({ limit }) =>
        globsMatch(limit.clients, call.client) &&
        globsMatch(limit.servers, call.server) &&
        globsMatch(limit.tools, call.tool),
    );
    for (const { policy, limit } of matching) {
      const { key, counted } = budgetKey(policy, limit, call);
      let budget = this.budgets.get(key);
      if (!budget) {
        const server = limit.per === 'client' ? undefined : call.server;
        this.budgets.set(key, (budget = { starts: [], head: 0, inFlight: 0, counted, ...(server ? { server } : {}) }));
      }
      slide(budget, now);
      const base = { policy, limit: limit.name, counted };
      if (limit.callsPerMinute !== undefined && budget.starts.length - budget.head >= limit.callsPerMinute) {
        const retryAfterSeconds = Math.max(1, Math.ceil((budget.starts[budget.head] + WINDOW_MS - now) / 1000));
        return { refused: { ...base, kind: 'per-minute', allowed: limit.callsPerMinute, retryAfterSeconds } };
      }
      if (limit.concurrent !== undefined && budget.inFlight >= limit.concurrent)
        return { refused: { ...base, kind: 'concurrent', allowed: limit.concurrent, retryAfterSeconds: 1 } };
      taken.push(budget);
    }
    for (const budget of taken) {
      budget.starts.push(now);
      budget.inFlight++;
    }
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        for (const budget of taken) budget.inFlight--;
      },
    };
  }
}

/**
 * The budgets of one limit that count calls to `server` (per-client budgets count every matching
 * server's calls, so they are all included), busiest first; budgets with nothing counted are left out.
 */
function usageOf(budgets: ReadonlyMap<string, Budget>, prefix: string, server: string, now: number): LimitUsage[] {
  const rows: LimitUsage[] = [];
  for (const [key, budget] of budgets) {
    if (!key.startsWith(prefix) || (budget.server !== undefined && budget.server !== server)) continue;
    slide(budget, now);
    const lastMinute = budget.starts.length - budget.head;
    if (lastMinute === 0 && budget.inFlight === 0) continue;
    rows.push({ counted: budget.counted, lastMinute, inFlight: budget.inFlight });
  }
  return rows.sort((a, b) => b.lastMinute - a.lastMinute || b.inFlight - a.inFlight);
}

/** Moves the window of `budget` to `now`: starts older than a minute leave it. */
function slide(budget: Budget, now: number): void {
  const { starts } = budget;
  while (budget.head < starts.length && starts[budget.head] <= now - WINDOW_MS) budget.head++;
  if (budget.head > 64 && budget.head * 2 > starts.length) {
    budget.starts = starts.slice(budget.head);
    budget.head = 0;
  }
}

function budgetKey(policy: string, limit: RateLimit, call: GuardedCall): { key: string; counted: string } {
  const tool = `${call.server}__${call.tool}`;
  const prefix = `${policy}/${limit.name}/`;
  switch (limit.per) {
    case 'client':
      return { key: `${prefix}${call.client}`, counted: `client '${call.client}'` };
    case 'tool':
      return { key: `${prefix}\0${tool}`, counted: `every client on ${tool}` };
    default:
      return { key: `${prefix}${call.client}\0${tool}`, counted: `client '${call.client}' on ${tool}` };
  }
}
