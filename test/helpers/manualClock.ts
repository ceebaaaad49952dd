// A clock a test advances itself, for logic that waits (idle periods, backoff): the test decides
// when time passes, so the assertion holds on a machine of any speed.
export class ManualClock {
  private now = 0;
  private nextId = 1;
  private readonly pending = new Map<number, { at: number; fn: () => void }>();

  readonly setTimeout = (fn: () => void, ms: number): number => {
    const id = this.nextId++;
    this.pending.set(id, { at: this.now + ms, fn });
    return id;
  };

  readonly clearTimeout = (handle: unknown): void => {
    this.pending.delete(handle as number);
  };

  /** Moves time on by `ms`, running every timer that falls due, in order (timers they set included). */
  advance(ms: number): void {
    const until = this.now + ms;
    for (;;) {
      const due = [...this.pending].filter(([, t]) => t.at <= until).sort((a, b) => a[1].at - b[1].at || a[0] - b[0]);
      if (!due.length) break;
      const [id, timer] = due[0];
      this.pending.delete(id);
      this.now = timer.at;
      timer.fn();
    }
    this.now = until;
  }

  get timersPending(): number {
    return this.pending.size;
  }
}
