// How many sessions may be open: per client identity and in all. A new session that would pass a
// cap takes the place of the oldest idle session (no open stream, no call waiting); when every
// session is in use it is refused, with an error that names the limit and what to do. The
// 2026-07-28 `subscriptions/listen` streams have caps of their own (each holds a connection, and
// none is idle): one past a cap is refused.
import type { Identity } from '../routing/requestContext';
import { sameIdentity, type Rejection } from './guards';

export interface SessionLimits {
  /** Open sessions per client identity (the operator counts as one client). */
  perClient: number;
  /** Open sessions in all. */
  total: number;
}

export const DEFAULT_SESSION_LIMITS: SessionLimits = { perClient: 64, total: 512 };

/** What the limits need to know about an open session. */
export interface SessionSlot {
  ctx: { identity: Identity };
  transport: { busy: boolean };
  lastSeen: number;
}

const CLOSE_UNUSED = 'Close sessions you no longer need (HTTP DELETE with their Mcp-Session-Id)';

/**
 * Makes room for one more session of `identity`: the sessions to close first (none, one or two),
 * or the Rejection when a cap is reached and no session it counts is idle.
 */
export function makeRoom<T extends SessionSlot>(
  sessions: Iterable<T>,
  identity: Identity,
  limits: SessionLimits,
): T[] | Rejection {
  let mine = 0;
  let open = 0;
  const idle: T[] = [];
  for (const session of sessions) {
    open++;
    const same = sameIdentity(session.ctx.identity, identity);
    if (same) mine++;
    if (!session.transport.busy) idle.push(session);
  }
  const evict: T[] = [];
  if (mine >= limits.perClient) {
    const oldest = oldestOf(idle, (s) => sameIdentity(s.ctx.identity, identity));
    if (!oldest) {
      return {
        status: 429,
        message:
          `Too many sessions: client '${identity.client}' has ${mine} open sessions, the limit, and all of them are ` +
          `in use. ${CLOSE_UNUSED} and try again.`,
      };
    }
    evict.push(oldest);
  }
  if (open - evict.length >= limits.total) {
    const oldest = oldestOf(idle, (s) => !evict.includes(s));
    if (!oldest) {
      return {
        status: 503,
        message:
          `The broker is at its limit of ${limits.total} open sessions and all of them are in use. ` +
          `${CLOSE_UNUSED}, or try again later.`,
      };
    }
    evict.push(oldest);
  }
  return evict;
}

function oldestOf<T extends SessionSlot>(sessions: T[], wanted: (s: T) => boolean): T | undefined {
  let oldest: T | undefined;
  for (const s of sessions) if (wanted(s) && (!oldest || s.lastSeen < oldest.lastSeen)) oldest = s;
  return oldest;
}

/** Open `subscriptions/listen` streams per client identity and in all (default 64 and 512). */
export const DEFAULT_LISTEN_LIMITS: SessionLimits = { perClient: 64, total: 512 };

/**
 * Whether `identity` may open one more listen stream, given the identities of the streams open (or
 * opening) now: undefined when it may, else the Rejection that names the limit.
 */
export function listenRoom(open: Iterable<Identity>, identity: Identity, limits: SessionLimits): Rejection | undefined {
  let mine = 0;
  let all = 0;
  for (const other of open) {
    all++;
    if (sameIdentity(other, identity)) mine++;
  }
  const close = 'Close listen streams you no longer need (one stream can carry every notification you want)';
  if (mine >= limits.perClient) {
    return {
      status: 429,
      message:
        `Too many listen streams: client '${identity.client}' has ${mine} open subscriptions/listen streams, ` +
        `the limit. ${close} and try again.`,
    };
  }
  if (all >= limits.total) {
    return {
      status: 503,
      message:
        `The broker is at its limit of ${limits.total} open subscriptions/listen streams. ${close}, ` +
        'or try again later.',
    };
  }
  return undefined;
}
