// How many sessions may be open: per client identity and in all. A new session that would pass a
// cap takes the place of the oldest idle session (no open stream, no call waiting); when every
// session is in use it is refused, with an error that names the limit and what to do.
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
