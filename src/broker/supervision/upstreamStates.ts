// The states of an upstream, the moves between them, and the questions the rest of the product asks
// about a state ("is it up?", "does a person have to act?"). Pure and dependency-free, so the CLI, the
// control operations and the extension all ask the same predicates instead of re-listing states.
//
//   stopped ──start──► starting ──connected──► running ──idle timer──► idle ──call──► starting
//      ▲                 │  ▲                   │                                      │
//      │           crash │  │ timer             │ crash                                │
//      │                 ▼  │                   ▼                                      │
//      └──stop──── backoff ◄┴──────────────── (restart policy) ──breaker──► failed     │
//   any ──policy──► disabled | awaiting-approval | blocked      (held: never runs)     │
//   starting | running ──► needs-sign-in | needs-input          (waits for a person) ◄─┘
//
// Within `starting` and `idle` the Upstream keeps a few facts of its own (a lazy server starting
// only to learn its catalog, a start someone waits for, whether its lists were ever confirmed); they
// refine how it starts, never which state it is in.

export type UpstreamState =
  | 'starting'
  | 'running'
  | 'backoff' // crashed; waiting to restart
  | 'failed' // crash-loop breaker open, or a start that can never succeed
  | 'stopped'
  | 'idle' // lazy, not running until a call needs it (its lists come from the catalog cache)
  | 'disabled' // enabled: false
  | 'awaiting-approval' // community tier without the operator's approval
  | 'blocked' // the workspace is not trusted: nothing from it may run
  | 'needs-sign-in' // a remote server that waits for the person to sign in (not a failure)
  | 'needs-input'; // waits for a secret the person enters once (`${input:NAME}`), not a failure

/** The states policy puts a server in: it must not run, whatever else happens. */
export type HeldState = 'disabled' | 'awaiting-approval' | 'blocked';
/** The states in which a server waits for a person to sign in or enter a secret. */
export type WaitingState = 'needs-sign-in' | 'needs-input';

const HELD: readonly HeldState[] = ['disabled', 'awaiting-approval', 'blocked'];
const WAITING: readonly WaitingState[] = ['needs-sign-in', 'needs-input'];

/**
 * Every move an upstream makes. A stop, and policy holding a server back, are possible from anywhere;
 * a server only runs through a start; only a connection in progress or live can fail or wait for a person.
 */
const MOVES: Readonly<Record<UpstreamState, readonly UpstreamState[]>> = {
  stopped: ['starting', 'idle', ...HELD],
  starting: ['running', 'backoff', 'failed', 'stopped', ...WAITING],
  running: ['idle', 'backoff', 'failed', 'stopped', ...WAITING],
  // A crash during the wait re-arms the timer (backoff again); the timer's start may find it held now.
  backoff: ['starting', 'backoff', 'failed', 'stopped', ...HELD],
  failed: ['starting', 'idle', 'stopped', ...HELD],
  idle: ['starting', 'stopped', ...HELD],
  disabled: ['starting', 'idle', 'stopped', ...HELD],
  'awaiting-approval': ['starting', 'idle', 'stopped', ...HELD],
  blocked: ['starting', 'idle', 'stopped', ...HELD],
  'needs-sign-in': ['starting', 'idle', 'stopped', ...HELD, ...WAITING],
  'needs-input': ['starting', 'idle', 'stopped', ...HELD, ...WAITING],
};

export const UPSTREAM_STATES = Object.keys(MOVES) as UpstreamState[];

/** Whether the state machine has the move `from` → `to` (staying put is always allowed). */
export function mayMove(from: UpstreamState, to: UpstreamState): boolean {
  return from === to || MOVES[from].includes(to);
}

/** Running, or on its way there (starting, or waiting out a restart backoff). */
export function isUp(state: string): boolean {
  return state === 'running' || state === 'starting' || state === 'backoff';
}

/** Policy keeps it from running: disabled, awaiting approval, or a workspace not trusted. */
export function isHeld(state: string): state is HeldState {
  return (HELD as readonly string[]).includes(state);
}

/** Waiting for a person to sign in or enter a secret (not a failure: retrying cannot help). */
export function waitsForPerson(state: string): state is WaitingState {
  return (WAITING as readonly string[]).includes(state);
}

/** Something the operator should look at: it failed, keeps crashing, or waits for them. */
export function needsAttention(state: string): boolean {
  return state === 'failed' || state === 'backoff' || state === 'awaiting-approval' || waitsForPerson(state);
}

/** Still on its way somewhere after a sign-in (the reconnect may not have begun yet): worth waiting for. */
export function isSettling(state: string): boolean {
  return state === 'starting' || state === 'backoff' || state === 'stopped' || state === 'needs-sign-in';
}
