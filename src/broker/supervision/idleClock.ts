// When a lazy upstream has gone unused long enough to stop: requests in flight and subscriptions
// hold it up, and the clock starts again when the last request ends.
export class IdleClock {
  private inflight = 0;
  private subscriptions = 0;
  private timer?: NodeJS.Timeout;

  constructor(private readonly onIdle: (why: string) => void) {}

  /** Nothing in flight and nothing subscribed. */
  get unused(): boolean {
    return this.inflight === 0 && this.subscriptions === 0;
  }

  /** A request starts: the clock stops until it ends. */
  begin(): void {
    this.inflight++;
    this.cancel();
  }

  /** A request ended; `method` counts a subscription made or dropped. */
  end(method: string, succeeded: boolean): void {
    this.inflight--;
    if (!succeeded) return;
    if (method === 'resources/subscribe') this.subscriptions++;
    else if (method === 'resources/unsubscribe') this.subscriptions = Math.max(0, this.subscriptions - 1);
  }

  /** Starts the clock (again) if nothing holds the server up. */
  arm(delayMs: number, why = `unused for ${delayMs} ms`): void {
    this.cancel();
    if (!this.unused) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.unused) this.onIdle(why);
    }, delayMs);
    this.timer.unref();
  }

  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** The connection is gone: its subscriptions with it. */
  reset(): void {
    this.cancel();
    this.subscriptions = 0;
  }
}
