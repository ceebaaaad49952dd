// A request's cancellation that makes no AbortSignal until somebody asks for one. Node's
// AbortSignal costs ~9 µs per call on the 2-core bench machine (its creation takes V8's slow
// keyed-store path, each signal ends up with a map of its own so every read of it misses its
// inline cache, and EventTarget listeners are heavy): on the per-call path, where almost no call is
// ever cancelled, that was ~3% of the broker's CPU per forwarded call (docs/performance.md, stop 39).
// The per-call path registers plain hooks (onAbort/offAbort); anything that needs a real signal
// (a remote fetch, an elicitation, a guardrail asking the operator) reads `signal`, made on demand
// and already aborted if the request was.

export type AbortHook = (reason: unknown) => void;

export class CallCancel {
  private controller?: AbortController;
  private hooks?: AbortHook[];
  private abortedWith: { reason: unknown } | undefined;

  get aborted(): boolean {
    return this.abortedWith !== undefined;
  }

  /** Why it was cancelled (undefined while it is not). */
  get reason(): unknown {
    return this.abortedWith?.reason;
  }

  /** A real AbortSignal that follows this cancellation, made on first use. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.abortedWith) this.controller.abort(this.abortedWith.reason);
    }
    return this.controller.signal;
  }

  /** Cancels once: the hooks run, then the signal (if one was made) aborts. Again: nothing. */
  abort(reason?: unknown): void {
    if (this.abortedWith) return;
    // Without a reason, the one AbortController.abort() would give.
    this.abortedWith = { reason: reason ?? new DOMException('This operation was aborted', 'AbortError') };
    const hooks = this.hooks;
    this.hooks = undefined;
    if (hooks) for (const hook of hooks) hook(this.abortedWith.reason);
    this.controller?.abort(this.abortedWith.reason);
  }

  /** Runs `hook` when it is cancelled (at most once); not called if it already was. */
  onAbort(hook: AbortHook): void {
    if (this.abortedWith) return;
    (this.hooks ??= []).push(hook);
  }

  offAbort(hook: AbortHook): void {
    const hooks = this.hooks;
    if (!hooks) return;
    const at = hooks.indexOf(hook);
    if (at !== -1) hooks.splice(at, 1);
  }
}
